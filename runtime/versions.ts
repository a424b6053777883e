/** Version lifecycle (docs/contract.md §3, §9): current → deprecated (Deprecation/Sunset headers) → removed (410). */
import type { Clock, VersionEntry } from './config.ts'

export type VersionState =
  | { state: 'current' }
  | { state: 'deprecated'; sunsetHttpDate: string; sunsetDate: string }
  | { state: 'removed' }
  | { state: 'unknown' }

function sunsetMs(d: string): number {
  return Date.parse(`${d}T00:00:00Z`)
}

export function versionState(versions: readonly VersionEntry[], name: string, clock: Clock): VersionState {
  const e = versions.find((x) => x.name === name)
  if (!e) return { state: 'unknown' }
  if (e.sunsetDate && clock() >= sunsetMs(e.sunsetDate)) return { state: 'removed' }
  if (e.status === 'deprecated' && e.sunsetDate) {
    return { state: 'deprecated', sunsetDate: e.sunsetDate, sunsetHttpDate: new Date(sunsetMs(e.sunsetDate)).toUTCString() }
  }
  return { state: 'current' }
}

/** The discovery payload of `GET /` (docs/contract.md §9): versions not yet removed. */
export function discoveryPayload(versions: readonly VersionEntry[], clock: Clock): { versions: Array<{ name: string; status: string; sunsetDate?: string }> } {
  return {
    versions: versions
      .filter((e) => versionState(versions, e.name, clock).state !== 'removed')
      .map((e) => (e.status === 'deprecated' ? { name: e.name, status: e.status, sunsetDate: e.sunsetDate } : { name: e.name, status: e.status })),
  }
}
