/**
 * The version of the API's description: the OpenAPI document's `info.version`, the MCP server's `serverInfo.version`
 * and the version of the typed client package `@orgscan/client` (client/package.json), so that a client's version
 * names the API it was generated from (docs/adr/0160-client-package.md). Its major is the API version of the paths
 * (`/v1`); bump the patch when the client or a description changes, the minor when something is added.
 */
export const API_VERSION = '1.0.0'
