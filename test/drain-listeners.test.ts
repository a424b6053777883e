/**
 * Stopping under keep-alive load loses no request on every kind of listener (as drain.test.ts for one listener, with
 * test/helpers/drain-load.ts): MCP on a listener of its own (MCP_PORT), HTTPS, and on PostgreSQL `--workers 2`, where
 * the primary passes SIGTERM on and each worker drains its own connections. Three runs each.
 */
import { t } from './helpers/file-test.ts'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertRuns, HEAVY, onListener, run, serverEnv, type Run, type Target } from './helpers/drain-load.ts'

const PG = process.env.TEST_DATABASE_URL
const RUNS = 3

t.test('MCP on a listener of its own (MCP_PORT): both listeners drain', async (t) => {
  const env = await serverEnv(t, { MCP_PORT: '0' })
  const results: Run[] = []
  for (let i = 0; i < RUNS; i++) {
    results.push(await run(env, ({ url, mcpUrl, auth }): Target[] => {
      const mcp = new URL(mcpUrl).origin
      t.not(mcp, url, 'two listeners')
      return [
        { url, path: HEAVY, headers: { authorization: auth } },
        { url: mcp, path: '/healthz', headers: {} },
      ]
    }))
  }
  assertRuns(t, results)
})

t.test('HTTPS (TLS_CERT, TLS_KEY)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-drain-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const cert = join(dir, 'ec.crt')
  const key = join(dir, 'ec.key')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-keyout', key, '-out', cert, '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-days', '1', '-nodes'], { stdio: 'ignore' })
  const env = await serverEnv(t, { TLS_CERT: cert, TLS_KEY: key })
  const results: Run[] = []
  for (let i = 0; i < RUNS; i++) {
    results.push(await run(env, ({ url, auth }) => {
      t.match(url, /^https:/)
      return onListener(url, auth)
    }, readFileSync(cert)))
  }
  assertRuns(t, results)
})

t.test('--workers 2: each worker drains its connections', { skip: PG ? false : 'needs TEST_DATABASE_URL (PostgreSQL): more than one worker needs it' }, async (t) => {
  const env = await serverEnv(t, { ORGSCAN_WORKERS: '2' })
  const results: Run[] = []
  for (let i = 0; i < RUNS; i++) results.push(await run(env, ({ url, auth }) => onListener(url, auth)))
  assertRuns(t, results)
})
