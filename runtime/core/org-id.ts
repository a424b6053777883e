/**
 * Org ids in paths: the 15-character case-sensitive id and its 18-character form address
 * the same org. The 18-character form appends a 3-character case-insensitive checksum of the first 15.
 */
import { ApiError } from './errors.ts'

const CHECK = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'

/** The detail of a 404 for an org the caller cannot see, before the pipeline adds the id and where orgs are listed. */
export const ORG_NOT_FOUND = 'Org not found.'
const ID15 = /^[A-Za-z0-9]{15}$/
const ID18 = /^[A-Za-z0-9]{18}$/

export function checksum(id15: string): string {
  let out = ''
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0
    for (let i = 0; i < 5; i++) {
      const c = id15.charCodeAt(chunk * 5 + i)
      if (c >= 65 && c <= 90) bits |= 1 << i
    }
    out += CHECK[bits]
  }
  return out
}

/** Whether `raw` has the form of an org id (15 or 18 letters and digits); its checksum is not checked. */
export function isOrgIdForm(raw: string): boolean {
  return ID15.test(raw) || ID18.test(raw)
}

/** The canonical 18-character id, or a 400 for a malformed one; a wrong checksum is a 404 (no such org). */
export function normalizeOrgId(raw: string, parameter = 'orgId'): string {
  if (ID15.test(raw)) return raw + checksum(raw)
  if (ID18.test(raw)) {
    const head = raw.slice(0, 15)
    const sum = checksum(head)
    if (raw.slice(15).toUpperCase() !== sum) throw new ApiError('not_found', ORG_NOT_FOUND, { parameter })
    return head + sum
  }
  throw new ApiError('invalid_id', `${parameter} must be a 15- or 18-character org id.`, { parameter })
}
