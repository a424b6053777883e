/**
 * A full disk under the embedded database, for real: the data folder on a small tmpfs, filled up while the service
 * runs. Requests that write (the quota's leases, opening an MCP session) are answered 503 with the retryable body, never
 * 500; /readyz reports not ready, naming the disk; the log says it once per kind, without stack traces; and once space
 * is freed everything works again, without a restart. Mounting a tmpfs needs root (CI runs as root): elsewhere the
 * file is skipped, saying so.
 */
import { t, endFile } from '../helpers/file-test.ts'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { embeddedRunOnly } from '../helpers/runs.ts'
import { startTestService } from '../helpers/service.ts'
import { initializeBody, rpc } from '../helpers/mcp.ts'

embeddedRunOnly(t, 'A full disk under the embedded database')

const mnt = mkdtempSync(join(tmpdir(), 'orgscan-full-disk-'))
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m,mode=0700', 'tmpfs', mnt], { stdio: 'ignore' })
} catch {
  rmdirSync(mnt)
  t.plan(0, 'a real full disk needs a small tmpfs, and mounting one needs root (as in CI): skipped')
  endFile()
}
t.teardown(() => {
  execFileSync('umount', ['-l', mnt], { stdio: 'ignore' })
  rmdirSync(mnt)
})

t.test('a full disk: 503s that say retry, not ready, one log line per kind; all well again once space is freed', async (t) => {
  const lines: string[] = []
  const dir = join(mnt, 'data')
  const ts = await startTestService(t, {
    log: (l) => lines.push(l),
    // The run's seeded folder, moved onto the small disk.
    beforeStart: async (at) => {
      cpSync(at.dataDir!, dir, { recursive: true })
      return { dataDir: dir }
    },
  })
  const auth = await ts.keyHeader(ts.seed.accounts[0].id)
  const mcpUrl = ts.svc.mcpUrl
  // No request before the disk is full: the first ones write new rows (the account's quota, a session), which need
  // new pages of their tables; later ones may fit in pages already there, and not fail at all.
  t.equal((await ts.get('/readyz')).status, 200)

  const filler = join(mnt, 'filler')
  const { bavail, bsize } = statfsSync(mnt)
  try {
    writeFileSync(filler, Buffer.alloc(bavail * bsize))
  } catch {
    // ENOSPC for the last blocks: the disk is full, as wanted
  }
  t.teardown(() => rmSync(filler, { force: true }))
  const logged = lines.length

  const rest: number[] = []
  for (let i = 0; i < 10; i++) {
    const r = await ts.get('/v1/orgs', auth)
    rest.push(r.status)
    if (r.status === 503) t.equal(r.body?.error?.code, 'service_unavailable', 'a REST 503 says retry')
    const m = await rpc(mcpUrl, initializeBody(i + 2), { authorization: auth })
    t.equal(m.status, 503, 'opening an MCP session is a 503')
    t.equal(m.body?.error?.data?.code, 'service_unavailable')
    t.ok(m.headers.get('retry-after'), 'with Retry-After')
  }
  t.notOk(rest.includes(500), `no REST answer is a 500 (${rest.join(' ')})`)
  t.ok(rest.includes(503), 'REST requests that need a write are 503s')
  const ready = await ts.get('/readyz')
  t.equal(ready.status, 503, '/readyz: not ready while writes fail')
  t.match(ready.body.reasons, [/^the disk holding the data folder is full \(\d+\.\d MB free\): writes fail$/])

  const during = lines.slice(logged).map((l) => JSON.parse(l) as { level: string; msg: string; err?: { stack?: string } })
  t.same(during.filter((l) => l.err?.stack !== undefined), [], 'no stack trace in the log')
  const kinds = during.map((l) => `${l.level} ${l.msg}`)
  t.same(kinds, [...new Set(kinds)], `one line per kind of failure (${during.length} lines for 20 failed requests)`)
  t.equal(kinds.filter((k) => k.includes(`the disk holding ${dir} is full`)).length, 1, 'the full disk is said once')

  rmSync(filler)
  t.equal((await ts.get('/readyz')).status, 200, 'ready again once space is freed')
  t.equal((await ts.get('/v1/orgs', auth)).status, 200)
  t.equal((await rpc(mcpUrl, initializeBody(99), { authorization: auth })).status, 200)
  t.ok(lines.some((l) => l.includes(`the disk holding ${dir} has`) && l.includes('free again: writes are accepted')), 'and the log says so')
})
