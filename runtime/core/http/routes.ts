/** The routes a listener serves: what the HTTP server takes from each surface (REST, MCP, OAuth, docs, health). */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** A router (find-my-way's shape): looks a request up, and finds a route without handling it. */
export type Router = {
  lookup(req: IncomingMessage, res: ServerResponse): unknown
  find(method: 'GET' | 'POST' | 'DELETE' | 'HEAD' | 'PUT' | 'PATCH' | 'OPTIONS', path: string): unknown
}

/** A router and the methods its paths answer, for the `Allow` header of a 405. */
export interface Routes {
  router: Router
  allow: readonly string[]
}
