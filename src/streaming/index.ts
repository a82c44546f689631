/** One entry point per operation; the engine never branches on the wire protocol. */
import type { ConnectionConfig } from '../net/connection.js';
import { openSpdyExec } from './exec-spdy.js';
import { openWebSocketExec } from './exec-websocket.js';
import { openSpdyPortForward, openTunnelPortForward } from './portforward-spdy.js';
import type { ExecOptions, ExecSession, PortForwardOptions, PortForwardSession, Transport } from './types.js';

interface TransportOpeners {
  readonly exec: (config: ConnectionConfig, opts: ExecOptions) => Promise<ExecSession>;
  readonly portforward: (config: ConnectionConfig, opts: PortForwardOptions) => Promise<PortForwardSession>;
}

/** What kubectl speaks on each transport: adding a transport means adding a row here. */
export const TRANSPORT_OPENERS: Readonly<Record<Transport, TransportOpeners>> = {
  websocket: { exec: openWebSocketExec, portforward: openTunnelPortForward },
  spdy: { exec: openSpdyExec, portforward: openSpdyPortForward },
};

export function openExec(transport: Transport, config: ConnectionConfig, opts: ExecOptions): Promise<ExecSession> {
  return TRANSPORT_OPENERS[transport].exec(config, opts);
}

export function openPortForward(transport: Transport, config: ConnectionConfig, opts: PortForwardOptions): Promise<PortForwardSession> {
  return TRANSPORT_OPENERS[transport].portforward(config, opts);
}

export type * from './types.js';
export type { ConnectionConfig } from '../net/connection.js';
