/** The files of test/mcp/ (the MCP server over the wire), in this one process (test/helpers/file-test.ts). */
import { runGroup } from './helpers/file-test.ts'

await runGroup(new URL('./mcp/', import.meta.url), (name) => import(`./mcp/${name}.test.ts`))
