/** `orgscan users`, `orgscan clients` and `accounts update --enhanced-mcp-security`. */
import t from 'tap'
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from './helpers/test-db.ts'
import { findTemplate } from './helpers/templates.ts'
import { spawnServer } from './helpers/server-process.ts'
import { demoBundle } from '../demo/bundle.ts'
import { DEMO_ORG_DEFS } from '../demo/orgs.ts'
import { run as cli } from '../bin/cli/main.ts'
import { mcpClient } from './helpers/mcp.ts'

const bin = new URL('../bin/orgscan.js', import.meta.url).pathname
const tdb = await createTestDatabase({ template: 'empty' })
t.teardown(() => tdb.drop())
const env: Record<string, string | undefined> = { ...process.env, ORGSCAN_PEPPER: 'cli-test-pepper-0123456789abcdefghij', DATABASE_URL: undefined }
if (tdb.databaseUrl) env.DATABASE_URL = tdb.databaseUrl
else env.ORGSCAN_DATA_DIR = tdb.dataDir!

/** A data folder of its own, migrated and empty (a copy of the run's template: PGlite's initdb is db-embedded's test). */
function migratedFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const template = findTemplate('empty', false)
  if (template) cpSync(template.dir, dir, { recursive: true })
  return dir
}

/** Runs the command in this process, as bin/orgscan.js would. */
async function run(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await cli(args, { out: (l) => (stdout += l + '\n'), err: (l) => (stderr += l + '\n'), env: { ...env, ...extraEnv } })
  return { code, stdout, stderr }
}

/** Runs the real executable (node + tsx + the command), as a user would. */
function spawnCli(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
    const p = spawn(process.execPath, [bin, ...args], { env: clean })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

t.test('users, clients and Enhanced MCP Security', async (t) => {
  const acct = JSON.parse((await run(['accounts', 'create', '--name', 'Sign-in Co', '--json'])).stdout) as { id: string }
  const u = await run(['users', 'create', '--account', acct.id, '--email', 'ana@signin.example'])
  t.equal(u.code, 0, u.stderr)
  t.match(u.stdout, /^created user \d+ \(ana@signin\.example\) in account \d+\none-time password: [a-z2-9]{24}\n/, 'a one-time password, shown once')
  const c = await run(['clients', 'create', '--account', acct.id, '--name', 'Desk', '--redirect-uri', 'http://localhost/cb', '--scope', 'mcp:read', '--json'])
  t.equal(c.code, 0, c.stderr)
  const client = JSON.parse(c.stdout) as { clientId: string; clientSecret: string; scopes: string[] }
  t.match(client, { clientId: /^osc_/, clientSecret: /^[A-Za-z0-9_-]{43}$/, scopes: ['mcp:read'] })
  const bad = await run(['clients', 'create', '--account', acct.id, '--name', 'Bad', '--redirect-uri', 'http://evil.example/cb', '--scope', 'mcp:read'])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /must be https, or http on localhost/)
  const up = await run(['clients', 'update', client.clientId, '--scope', 'mcp:read', '--scope', 'mcp:write', '--json'])
  t.same(JSON.parse(up.stdout).scopes, ['mcp:read', 'mcp:write'])
  const on = await run(['accounts', 'update', acct.id, '--enhanced-mcp-security', 'on', '--json'])
  t.equal(JSON.parse(on.stdout).enhancedMcpSecurity, true)
  const wrong = await run(['accounts', 'update', acct.id, '--enhanced-mcp-security', 'yes'])
  t.equal(wrong.code, 2)
  const revoked = await run(['clients', 'revoke', client.clientId])
  t.match(revoked.stdout, /^revoked osc_/)
})
