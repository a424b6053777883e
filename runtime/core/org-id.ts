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

/**
 * What makes `raw` no org id, said so that it can follow its name ("orgId contains …"): a character other than a
 * letter or digit (the first one, quoted), or a length other than 15 or 18; undefined for the form of an org id (its
 * checksum is `checksumProblem`'s).
 */
export function orgIdFormProblem(raw: string): string | undefined {
  if (isOrgIdForm(raw)) return undefined
  const bad = /[^A-Za-z0-9]/u.exec(raw)?.[0]
  // Quoted as typed; a space or a control character as an escape, which shows it.
  if (bad !== undefined) return `contains ${/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(bad) ? `'${bad}'` : JSON.stringify(bad)}: an org id has only letters and digits`
  return `has ${raw.length} character${raw.length === 1 ? '' : 's'}: an org id has 15, or 18 with its checksum`
}

/**
 * Why an 18-character id addresses no org whatever the data: its last 3 characters are not the checksum of its first
 * 15 (the expected one is named; it says nothing of which orgs exist). Undefined for any other id.
 */
export function checksumProblem(raw: string): string | undefined {
  if (!ID18.test(raw)) return undefined
  const sum = checksum(raw.slice(0, 15))
  const given = raw.slice(15)
  if (given.toUpperCase() === sum) return undefined
  return `the last 3 characters of an 18-character org id are the checksum of its first 15, here ${sum}, not ${given}`
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
  throw new ApiError('invalid_id', `${parameter} ${orgIdFormProblem(raw)}.`, { parameter })
}
