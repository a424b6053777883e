/**
 * `orgscan pepper export [--out FILE] [--delete]`: moves the pepper an older orgscan kept in the database
 * (server_settings) out of it (runtime/platform/secrets.ts; docs/operating.md "The pepper"). It prints the pepper, or writes it
 * to FILE (created with mode 0600, never over an existing file), and deletes it from the database only once told to:
 * --delete, or a "y" at the question a terminal is asked. The database is only read and that one row deleted: the
 * command works on a database whose server refuses to start.
 */
import { resolve } from 'node:path'
import { AdminError } from '../../runtime/platform/admin.ts'
import type { Database } from '../../runtime/platform/db/connect.ts'
import { deleteStoredPepper, readStoredPepper, writeSecretFile } from '../../runtime/platform/secrets.ts'
import { parse, UsageError } from './args.ts'
import { OutputError } from './export-command.ts'
import type { CliIO } from './main.ts'

const NOTHING_STORED =
  'This database holds no pepper (server_settings has none): nothing to export. The pepper comes from ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE, or on the embedded database from the data folder\'s file `pepper`.'

const STILL_STORED =
  'The pepper is still stored in the database. Once ORGSCAN_PEPPER_FILE (or ORGSCAN_PEPPER) gives it to every orgscan process, start one: it deletes the stored copy when they are equal. Or run `orgscan pepper export --delete`.'

function writeOut(file: string, pepper: string): void {
  try {
    writeSecretFile(file, pepper)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new OutputError(`${file} exists: choose another file (an existing one is never overwritten), or remove it first.`)
    throw new OutputError(`Cannot write ${file} (${code ?? (e as Error).message.split('\n')[0]}).`)
  }
}

export async function pepperCommand(args: string[], io: CliIO, open: () => Promise<Database>): Promise<void> {
  const [action, ...rest] = args
  if (action !== 'export') throw new UsageError('pepper takes export. Run "orgscan pepper --help".')
  const { values } = parse(rest, { out: { type: 'string' }, delete: { type: 'boolean' } })
  if (values.out === '') throw new UsageError('--out needs a file name.')
  const out = values.out === undefined ? undefined : resolve(String(values.out))
  const json = values.json === true
  const db = await open()
  try {
    const pepper = await readStoredPepper(db.sql)
    if (pepper === undefined) throw new AdminError(NOTHING_STORED)
    // Without --out, standard output carries the pepper alone; what was done goes to stderr.
    const say = out ? io.out : io.err
    if (out) writeOut(out, pepper)
    if (!json) io.out(out ? `wrote the pepper to ${out} (mode 0600)` : pepper)
    const told = values.delete === true || (!json && (await io.confirm?.('Delete the pepper from the database now (do so once it is kept where ORGSCAN_PEPPER_FILE or ORGSCAN_PEPPER will read it)? [y/N] ')) === true)
    // Deleted only while it still holds what was written out (nothing else writes it any more).
    if (told) await deleteStoredPepper(db.sql, pepper)
    const deleted = told
    if (json) return io.out(JSON.stringify(out ? { file: out, deleted } : { pepper, deleted }))
    say(deleted ? `deleted it from the database; set ORGSCAN_PEPPER_FILE${out ? `=${out}` : ''} (or ORGSCAN_PEPPER) for every orgscan process` : STILL_STORED)
  } finally {
    await db.close()
  }
}
