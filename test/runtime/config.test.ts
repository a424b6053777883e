/** Configuration: every problem is reported at once, cross-field and version-table problems included. */
import { t } from '../helpers/file-test.ts'
import { readFileSync } from 'node:fs'
import { ConfigError, EnvSchema, loadConfig } from '../../runtime/platform/config.ts'

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    return e.message.split('\n').slice(1).map((l) => l.trim())
  }
  return []
}

t.test('defaults load', async (t) => {
  const c = loadConfig({})
  t.equal(c.port, 3000)
  t.equal(c.versions, undefined, 'no first-start version table: the database keeps it (migration 007: v1 current)')
  t.equal(c.mail, undefined, 'no SMTP server unless configured')
  t.equal(c.tls, undefined)
})

t.test('every problem at once', async (t) => {
  const p = problems({
    PORT: 'eighty',
    ORGSCAN_POOL_SIZE: '0',
    ORGSCAN_VERSIONS: '[{"name":"v1","status":"deprecated"}]',
    ORGSCAN_MCP_VERSIONS: 'not json',
    ORGSCAN_OIDC_ISSUER: 'https://idp.example',
    TLS_KEY: '/nonexistent/key.pem',
    SMTP_URL: 'smtp://user:secret-password@mail.example.com:587',
  })
  t.equal(p.length, 8, p.join(' | '))
  t.match(p.join('\n'), /SMTP_URL and SMTP_FROM go together/)
  t.notMatch(p.join('\n'), /secret-password/, 'the SMTP password is never echoed')
  t.match(p.join('\n'), /PORT: must be a whole number/)
  t.match(p.join('\n'), /ORGSCAN_POOL_SIZE/)
  t.match(p.join('\n'), /ORGSCAN_VERSIONS: Version v1 is deprecated but has no sunsetDate/, 'a deprecated version without sunsetDate, among others')
  t.match(p.join('\n'), /ORGSCAN_MCP_VERSIONS: must be JSON/)
  t.match(p.join('\n'), /ORGSCAN_OIDC_ISSUER, ORGSCAN_OIDC_CLIENT_ID and ORGSCAN_OIDC_CLIENT_SECRET go together/)
  t.match(p.join('\n'), /TLS_CERT and TLS_KEY go together/)
  t.match(p.join('\n'), /TLS_KEY: cannot read \/nonexistent\/key\.pem \(ENOENT\)/)
})

t.test('a variable set but empty is refused with what to do, never read as unset', async (t) => {
  const p = problems({ DATABASE_URL: '', PORT: '', ORGSCAN_PUBLIC_URL: '', HOST: '', ORGSCAN_ADMIN_HOST: '', ORGSCAN_DATA_DIR: '' })
  t.same(p.sort(), [
    'DATABASE_URL: is set but empty; give a value, or unset it for the default',
    'HOST: is set but empty; give a value, or unset it for the default',
    'ORGSCAN_ADMIN_HOST: is set but empty; give a value, or unset it for the default',
    'ORGSCAN_DATA_DIR: is set but empty; give a value, or unset it for the default',
    'ORGSCAN_PUBLIC_URL: is set but empty; give a value, or unset it for the default',
    'PORT: is set but empty; give a value, or unset it for the default',
  ], 'an unresolved ${VAR} must not start a server on demo data, nor one listening on every interface')
  t.same(problems({ ORGSCAN_MCP_ALLOWED_ORIGINS: '', ORGSCAN_ALLOWED_HOSTS: '', ORGSCAN_AGENT_CLIENTS: '' }), [], 'the lists may be empty')
  t.equal(loadConfig({ ORGSCAN_MCP_ALLOWED_ORIGINS: '' }).mcp.allowedOrigins.length, 0, 'a list may be empty')
})

t.test('DATABASE_REPLICA_URL: PostgreSQL only, with its primary', async (t) => {
  t.match(problems({ DATABASE_REPLICA_URL: 'postgres://replica:5432/orgscan' }).join('\n'), /DATABASE_REPLICA_URL needs DATABASE_URL: .*the embedded database has none/, 'refused on the embedded database')
  t.match(problems({ DATABASE_URL: 'postgres://db/orgscan', DATABASE_REPLICA_URL: 'mysql://replica/orgscan' }).join('\n'), /DATABASE_REPLICA_URL: must start with postgres:\/\//)
  const c = loadConfig({ DATABASE_URL: 'postgres://db/orgscan', DATABASE_REPLICA_URL: 'postgres://replica/orgscan' })
  t.equal(c.replicaUrl, 'postgres://replica/orgscan')
  t.equal(loadConfig({}).replicaUrl, undefined, 'none by default')
})

t.test('README.md documents every setting, and only settings that exist', async (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  // The settings table: rows whose first cell names settings in backquotes.
  const rows = readme.split('\n').filter((l) => /^\| `[A-Z][A-Z0-9_]+`/.test(l))
  const documented = new Set(rows.flatMap((l) => [...l.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])))
  const settings = Object.keys(EnvSchema.entries)
  t.ok(settings.length > 40, `the schema's settings (${settings.length})`)
  for (const s of settings) t.ok(documented.has(s), `${s} is in README.md's settings table`)
  for (const d of documented) t.ok(settings.includes(d), `${d} in README.md is a setting`)
})

t.test('the pepper: ORGSCAN_PEPPER, or ORGSCAN_PEPPER_FILE (its trailing newline trimmed), never both', async (t) => {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = mkdtempSync(join(tmpdir(), 'orgscan-pepper-config-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const secret = 'k7Qw9zX2mN4pL8rT1vB6yH3jF5sD0aGcE2uI9oPq'
  const file = join(dir, 'pepper')
  writeFileSync(file, secret + '\n', { mode: 0o600 })
  t.equal(loadConfig({ ORGSCAN_PEPPER_FILE: file }).pepper, secret, 'read from the file, without its newline (openssl rand -base64 48 > FILE)')
  writeFileSync(join(dir, 'crlf'), secret + '\r\n')
  t.equal(loadConfig({ ORGSCAN_PEPPER_FILE: join(dir, 'crlf') }).pepper, secret, 'a CRLF too')
  t.equal(loadConfig({ ORGSCAN_PEPPER: secret }).pepper, secret)
  t.equal(loadConfig({}).pepper, undefined, 'none by default (the embedded database keeps its own; PostgreSQL refuses to start)')
  t.same(problems({ ORGSCAN_PEPPER: secret, ORGSCAN_PEPPER_FILE: file }), ['ORGSCAN_PEPPER and ORGSCAN_PEPPER_FILE are both set: give the pepper one way only'])
  writeFileSync(join(dir, 'short'), 'x'.repeat(31) + '\n')
  const short = problems({ ORGSCAN_PEPPER_FILE: join(dir, 'short') })
  t.match(short, [/^ORGSCAN_PEPPER_FILE: .*short must hold at least 32 characters \(openssl rand -base64 48 > /], 'at least 32 characters, as ORGSCAN_PEPPER')
  t.notMatch(short.join('\n'), /xxxx/, 'the contents are never echoed')
  t.match(problems({ ORGSCAN_PEPPER_FILE: join(dir, 'missing') }), [/^ORGSCAN_PEPPER_FILE: cannot read .*missing \(ENOENT\)$/])
  t.match(problems({ ORGSCAN_PEPPER: 'too-short' }), [/^ORGSCAN_PEPPER: must be at least 32 characters$/])
  t.same(problems({ ORGSCAN_PEPPER_FILE: '' }), ['ORGSCAN_PEPPER_FILE: is set but empty; give a value, or unset it for the default'])
})
