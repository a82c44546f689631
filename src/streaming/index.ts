/** One entry point per operation; the engine never branches on the wire protocol. */
import { openSpdyExec } from './exec-spdy.js';
import { openWebSocketExec } from './exec-websocket.js';
import { openSpdyPortForward, openTunnelPortForward } from './portforward-spdy.js';
import type { ExecOptions, ExecSession, PortForwardOptions, PortForwardSession, Transport } from './types.js';
import type { ConnectionConfig } from '../net/connection.js';

export function openExec(transport: Transport, config: ConnectionConfig, opts: ExecOptions): Promise<ExecSession> {
  return transport === 'spdy' ? openSpdyExec(config, opts) : openWebSocketExec(config, opts);
}

export function openPortForward(transport: Transport, config: ConnectionConfig, opts: PortForwardOptions): Promise<PortForwardSession> {
  return transport === 'spdy' ? openSpdyPortForward(config, opts) : openTunnelPortForward(config, opts);
}

export type * from './types.js';
export type { ConnectionConfig } from '../net/connection.js';
