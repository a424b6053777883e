/**
 * Scan import: the contract with the scanner (docs/import.md). A bundle — a JSON document, or an NDJSON file streamed
 * line by line — is validated against the registry and written in ONE transaction that also flips the org's
 * latest_scan_id, so a reader never sees half a scan. The machinery is in runtime/platform/bundle/.
 */
import type postgres from 'postgres'
import type { CompiledResource } from '../core/registry.ts'
import { ImportError, importBundle, stageBundle, targetNames, type ImportOptions, type ImportResult, type StagedScan } from './bundle/import-bundle.ts'
import type { ProgressEvent } from './bundle/progress.ts'
import { statSync } from 'node:fs'
import { isNdjsonFile, jsonFileSource, ndjsonFileSource, objectSource } from './bundle/sources.ts'
import type { OrgInfo, ScanInfo } from './bundle/wire.ts'

export { ImportError, importTargets, vacuumStaged, type ImportOptions, type ImportResult, type StagedScan } from './bundle/import-bundle.ts'
export { renderIgnored, type IgnoredFields, type Problem } from './bundle/problems.ts'
export { OrgInfoSchema, ScanInfoSchema, type OrgInfo, type ScanInfo } from './bundle/wire.ts'

export interface ScanBundle {
  org: OrgInfo
  scan: ScanInfo
  /** Records per resource name; a singleton takes one object. Omitted resources import as empty. */
  data: Record<string, unknown>
}

/** Records of a resource at least this many get a progress line from `importScan`. */
const LINE_AT = 5000

/**
 * Imports one scan bundle object for an org of `accountId` (creating the org on first import); the demo seed and
 * tests use it. Fails if the org belongs to another account. Progress lines (large resources) go to `progress`. Given a
 * transaction, the import is a savepoint of it (the demo seed is one transaction).
 */
export async function importScan(
  sql: postgres.Sql | postgres.TransactionSql,
  resources: readonly CompiledResource[],
  accountId: string,
  bundle: ScanBundle,
  progress: (line: string) => void = () => undefined,
): Promise<ImportResult> {
  const { known, singletons } = targetNames(resources)
  const lines = (e: ProgressEvent) => {
    if (e.type === 'resource' && e.records >= LINE_AT) progress(`  ${e.resource}: ${e.records} records`)
  }
  return importBundle(sql, resources, accountId, objectSource(bundle, known, singletons), { copy: false, progress: lines })
}

/**
 * Stages one scan bundle object for an org of `accountId`, served only once published (`StagedScan.publish`): its
 * records are written in statements that each commit on their own, never in one long transaction
 * (runtime/platform/bundle/import-bundle.ts `stageBundle`). The first start's background demo seed uses it.
 */
export async function stageScan(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  accountId: string,
  bundle: ScanBundle,
  signal?: AbortSignal,
): Promise<StagedScan> {
  const { known, singletons } = targetNames(resources)
  return stageBundle(sql, resources, accountId, objectSource(bundle, known, singletons), { signal })
}

/** The largest JSON bundle read (it is read and parsed whole; NDJSON has no limit). */
export const MAX_JSON_BUNDLE_BYTES = 512 * 1024 * 1024

/**
 * Imports a bundle file, JSON or NDJSON (told apart by the first line: the NDJSON header). An NDJSON file is read in
 * constant memory; a JSON one whole. `copy`: write large tables with COPY (PostgreSQL).
 */
export async function importFile(
  sql: postgres.Sql,
  resources: readonly CompiledResource[],
  accountId: string,
  file: string,
  opts: ImportOptions,
): Promise<ImportResult> {
  const { known, singletons } = targetNames(resources)
  let source
  try {
    // A device, a FIFO or a directory is refused before any read: /dev/zero read whole would fill the memory (of the
    // server, when the CLI hands the import to a running one).
    const st = statSync(file)
    if (!st.isFile()) throw new ImportError(`Cannot read ${file}: not a regular file.`)
    const ndjson = isNdjsonFile(file)
    if (!ndjson && st.size > MAX_JSON_BUNDLE_BYTES) {
      throw new ImportError(`Cannot read ${file}: a JSON bundle is read whole and may be at most ${MAX_JSON_BUNDLE_BYTES / 1024 / 1024} MB; export large orgs as NDJSON (docs/import.md).`)
    }
    source = ndjson ? await ndjsonFileSource(file, known) : jsonFileSource(file, known, singletons)
  } catch (e) {
    if (e instanceof ImportError) throw e
    throw new ImportError(`Cannot read ${file}: ${(e as Error).message.split('\n')[0]}`)
  }
  return importBundle(sql, resources, accountId, source, opts)
}
