/**
 * undici's Pool and request() by their files, so the bundle leaves out fetch,
 * WebSocket and caches (src/kube/rest.ts). The index adds request() to every
 * dispatcher's prototype; importing it alone, we call it on the pool.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export default request;
}
