/**
 * The API key pepper (HMAC key). Configured with ORGSCAN_PEPPER in production. Without it: the embedded
 * database keeps a generated pepper in its data folder (mode 0600); a PostgreSQL deployment keeps one in
 * `server_settings` and warns at start-up (a pepper stored beside the hashes protects less).
 */
import { randomBytes, createHmac } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type postgres from 'postgres'
import type { Logger } from './log.ts'

export async function resolvePepper(opts: { configured?: string; dataDir?: string; embedded: boolean; sql: postgres.Sql; log: Logger }): Promise<string> {
  if (opts.configured) return opts.configured
  if (opts.embedded && opts.dataDir && opts.dataDir !== 'memory://') {
    const file = join(opts.dataDir, 'pepper')
    if (existsSync(file)) return readFileSync(file, 'utf8').trim()
    mkdirSync(opts.dataDir, { recursive: true })
    const p = randomBytes(32).toString('base64url')
    writeFileSync(file, p + '\n', { mode: 0o600, flag: 'wx' })
    return p
  }
  const fresh = randomBytes(32).toString('base64url')
  await opts.sql`INSERT INTO server_settings (name, value) VALUES ('api_key_pepper', ${fresh}) ON CONFLICT (name) DO NOTHING`
  const [row] = await opts.sql`SELECT value FROM server_settings WHERE name = 'api_key_pepper'`
  if (!opts.embedded) opts.log.warn({ msg: 'ORGSCAN_PEPPER is not set; using the API key pepper stored in the database. Set ORGSCAN_PEPPER in production.' })
  return row.value as string
}

/** The demo API key is derived from the pepper, so `npm start` can print it on every start without storing it. */
export function demoCredentials(pepper: string): { keyId: string; secret: string } {
  const h = createHmac('sha256', pepper).update('orgscan demo api key v1').digest()
  const B32 = 'abcdefghijklmnopqrstuvwxyz234567'
  let keyId = 'osk_'
  for (let i = 0; i < 20; i++) keyId += B32[h[i] & 31]
  const secret = createHmac('sha256', pepper).update('orgscan demo api key secret v1').digest().toString('base64url')
  return { keyId, secret }
}

/** The demo user's password, derived from the pepper like the demo key, so `npm start` can print it on every start. */
export function demoPassword(pepper: string): string {
  return createHmac('sha256', pepper).update('orgscan demo user password v1').digest('base64url').slice(0, 20)
}
