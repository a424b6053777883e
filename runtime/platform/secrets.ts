/**
 * The pepper: the server-side key of the API key and OAuth client secret hashes, from which the key that encrypts the
 * OAuth signing keys at rest is derived too. It never lives in the database, or read access to the database would be
 * enough to forge tokens (docs/adr/0120-pepper-outside-database.md). It comes from ORGSCAN_PEPPER or
 * ORGSCAN_PEPPER_FILE (runtime/platform/config.ts); PostgreSQL needs one of them. Without either, the embedded database keeps a
 * generated pepper in its data folder (`pepper`, mode 0600, the folder 0700), and an in-memory one in memory.
 *
 * Older versions kept a generated pepper in `server_settings` (PostgreSQL without ORGSCAN_PEPPER, the in-memory
 * database). Such a stored pepper is moved out here, in code, never by a migration that would lose it: to the data
 * folder's file (embedded), or by the operator (`orgscan pepper export`, PostgreSQL); once a configured pepper equals
 * it, the stored copy is deleted.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type postgres from 'postgres'
import type { Logger } from '../core/log.ts'
import { ConfigError, MIN_PEPPER_LENGTH, trimPepper } from './config.ts'
import { MEMORY_DATA_DIR } from './db/connect.ts'

/** The `server_settings` row older versions kept the pepper in. */
export const STORED_PEPPER_SETTING = 'api_key_pepper'
/** The embedded database's pepper file, in its data folder. */
export const PEPPER_FILE_NAME = 'pepper'

const CREATE_ONE = 'Create one with `(umask 077 && openssl rand -base64 48 > /etc/orgscan/pepper)` and set ORGSCAN_PEPPER_FILE=/etc/orgscan/pepper (or ORGSCAN_PEPPER to the value), the same in every orgscan process.'
const MOVE_IT = 'Move it out: `orgscan pepper export --out /etc/orgscan/pepper --delete` writes it to that file (mode 0600) and then deletes it from the database; then set ORGSCAN_PEPPER_FILE=/etc/orgscan/pepper (or ORGSCAN_PEPPER to the value) for every orgscan process. (Without --delete, the first start with the same pepper configured deletes the stored copy.)'

/** Why a PostgreSQL deployment without ORGSCAN_PEPPER / ORGSCAN_PEPPER_FILE does not start. */
export const NO_PEPPER_MESSAGE =
  'ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE must be set with a PostgreSQL database (DATABASE_URL): the pepper keys the API key hashes and encrypts the OAuth signing keys, so it must not be kept in the database. ' +
  CREATE_ONE
/** Why a database whose pepper is still stored in it does not start without one configured. */
export const STORED_PEPPER_MESSAGE =
  'This database holds its pepper in the server_settings table (an older orgscan put it there), where anyone who can read the database can use it to forge access tokens; it is no longer read from there, and no ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE is set. ' +
  MOVE_IT
/** Why a configured pepper that differs from the stored one is refused. */
export function differentPepperMessage(source: string): string {
  return (
    `The pepper of ${source} differs from the one stored in this database's server_settings table, with which its API keys, OAuth client secrets and signing keys were made: with ${source} none of them would work. ` +
    'Use the stored pepper: `orgscan pepper export --out FILE` writes it to FILE (mode 0600); point ORGSCAN_PEPPER_FILE at FILE (the next start deletes the stored copy). ' +
    'To start over with the new pepper instead (the signing keys deleted, every API key and OAuth client secret issued again: docs/operating.md "The pepper"), delete the stored one with `orgscan pepper export --delete`.'
  )
}

/** Constant-time equality of two peppers (their digests, so lengths do not leak either). */
function samePepper(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest())
}

/** The pepper stored in `server_settings` by an older version, if any (none either when the table does not exist yet). */
export async function readStoredPepper(sql: postgres.Sql): Promise<string | undefined> {
  const [t] = await sql`SELECT to_regclass('server_settings') IS NOT NULL AS present`
  if (!t.present) return undefined
  const [row] = await sql`SELECT value FROM server_settings WHERE name = ${STORED_PEPPER_SETTING}`
  return row ? (row.value as string) : undefined
}

/** Deletes the stored pepper if it is still `value`; true when this call deleted it. */
export async function deleteStoredPepper(sql: postgres.Sql, value: string): Promise<boolean> {
  const gone = await sql`DELETE FROM server_settings WHERE name = ${STORED_PEPPER_SETTING} AND value = ${value} RETURNING 1`
  return gone.length > 0
}

/** A stored pepper beside `pepper` (from `source`): deleted when the same, else the start is refused. */
async function retireStored(sql: postgres.Sql, log: Logger, stored: string, pepper: string, source: string): Promise<void> {
  if (!samePepper(stored, pepper)) throw new ConfigError(differentPepperMessage(source))
  if (await deleteStoredPepper(sql, stored)) log.info({ msg: `pepper: deleted the copy stored in the database (server_settings); it equals the pepper of ${source}, which is used from now on` })
}

/**
 * Writes a secret to `file`, which must not exist: to a temporary file of the same folder created exclusively with mode
 * 0600 (whatever the umask), synced, then linked to its name, so `file` never exists half written and an existing one
 * is never replaced. Throws with code EEXIST when `file` exists.
 */
export function writeSecretFile(file: string, value: string): void {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  const fd = openSync(tmp, 'wx', 0o600)
  try {
    try {
      fchmodSync(fd, 0o600)
      writeSync(fd, value + '\n')
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    try {
      linkSync(tmp, file)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      // A file system without hard links: rename, having checked the name is free (no other writer runs meanwhile here).
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e
      if (existsSync(file)) throw Object.assign(new Error(`${file} exists`), { code: 'EEXIST' })
      renameSync(tmp, file)
    }
  } finally {
    rmSync(tmp, { force: true })
  }
  try {
    const dir = openSync(dirname(file), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
  } catch {
    // Not every platform syncs a folder; the file itself is synced.
  }
}

/** The data folder, kept owner-only (it holds the pepper): created 0700, tightened when it is not. */
function privateFolder(dir: string, log: Logger): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  if ((statSync(dir).mode & 0o077) !== 0) {
    chmodSync(dir, 0o700)
    log.info({ msg: `pepper: made the data folder ${resolve(dir)} accessible to its owner only (0700): it holds the pepper` })
  }
}

/** The data folder's pepper, or undefined when the file does not exist. */
function readPepperFile(file: string, log: Logger): string | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new ConfigError(`Cannot read the pepper file ${resolve(file)} (${(e as NodeJS.ErrnoException).code ?? 'error'}).`)
  }
  const pepper = trimPepper(text)
  if (pepper.length < MIN_PEPPER_LENGTH) {
    throw new ConfigError(`The pepper file ${resolve(file)} holds fewer than ${MIN_PEPPER_LENGTH} characters: restore it from a backup (the API keys were made with it), or delete it to generate a new one (every API key must then be issued again).`)
  }
  if ((statSync(file).mode & 0o077) !== 0) {
    chmodSync(file, 0o600)
    log.warn({ msg: `pepper: ${resolve(file)} was readable by others; it is now 0600` })
  }
  return pepper
}

/** A configured pepper replaces the data folder's: said at start, since keys made with the file's stop working. */
function warnIfFileDiffers(file: string, configured: string, log: Logger): void {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return
  }
  if (!samePepper(trimPepper(text), configured)) {
    log.warn({ msg: `pepper: ORGSCAN_PEPPER / ORGSCAN_PEPPER_FILE differs from the data folder's ${resolve(file)}, which is ignored: API keys made with it do not authenticate. Point ORGSCAN_PEPPER_FILE at that file to keep them.` })
  }
}

/**
 * The pepper of this start. `configured`: ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE. Call it before migrating, so that a
 * refused start leaves the database as it was. Throws ConfigError when none may be used (PostgreSQL without one, a
 * stored pepper to move out, or one configured that differs from the stored one).
 */
export async function resolvePepper(opts: { configured?: string; dataDir?: string; embedded: boolean; sql: postgres.Sql; log: Logger }): Promise<string> {
  const { sql, log } = opts
  const stored = await readStoredPepper(sql)
  if (opts.configured !== undefined) {
    if (stored !== undefined) await retireStored(sql, log, stored, opts.configured, 'ORGSCAN_PEPPER / ORGSCAN_PEPPER_FILE')
    if (opts.embedded && opts.dataDir && opts.dataDir !== MEMORY_DATA_DIR) warnIfFileDiffers(join(opts.dataDir, PEPPER_FILE_NAME), opts.configured, log)
    return opts.configured
  }
  if (!opts.embedded) throw new ConfigError(stored === undefined ? NO_PEPPER_MESSAGE : STORED_PEPPER_MESSAGE)
  // An in-memory database lives as long as this process, and so does its pepper.
  if (!opts.dataDir || opts.dataDir === MEMORY_DATA_DIR) {
    if (stored !== undefined) await deleteStoredPepper(sql, stored)
    return stored ?? randomBytes(32).toString('base64url')
  }
  privateFolder(opts.dataDir, log)
  const file = join(opts.dataDir, PEPPER_FILE_NAME)
  const existing = readPepperFile(file, log)
  if (existing !== undefined) {
    if (stored !== undefined) await retireStored(sql, log, stored, existing, resolve(file))
    return existing
  }
  const pepper = stored ?? randomBytes(32).toString('base64url')
  try {
    writeSecretFile(file, pepper)
  } catch (e) {
    // Created meanwhile (the data folder's lock makes that unlikely): that one is the pepper.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    return resolvePepper(opts)
  }
  if (stored !== undefined && (await deleteStoredPepper(sql, stored))) {
    log.info({ msg: `pepper: moved from the database (server_settings) to ${resolve(file)} (mode 0600); back that file up with the data folder` })
  }
  return pepper
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
