/**
 * Messages between the main thread (embedded.ts) and the embedded-database worker (embedded-worker.mjs).
 *
 *   worker → main  { type: 'ready', endpoint, openMs }   listening; PGlite is open
 *                  { type: 'fatal', message, stack }     startup failed / crashed (the worker then exits)
 *                  { type: 'closed', error? }            after a 'close' request: server stopped, PGlite closed
 *                                                        (the thread stays, for an 'open' or to be terminated)
 *   main → worker  { type: 'close' }
 *                  { type: 'open', input }               after 'closed': open the next database, then 'ready'
 */
export type EmbeddedEndpoint = { path: string } | { host: string; port: number }

export interface WorkerInput {
  /** Absolute folder path, or 'memory://'. */
  dataDir: string
  /** Unix socket path to listen on; without it: TCP on 127.0.0.1, port chosen by the OS. */
  socketPath?: string
}

export type WorkerMessage =
  | { type: 'ready'; endpoint: EmbeddedEndpoint; openMs: number }
  | { type: 'fatal'; message: string; stack?: string }
  | { type: 'closed'; error?: string }
  | { type: 'noSpace' }

export type MainMessage = { type: 'close' } | { type: 'open'; input: WorkerInput }
