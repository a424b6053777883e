/**
 * "Did you mean …?" for a name a client got wrong (a filter or sort field, an argument): the allowed name nearest by
 * edit distance, offered only when it is close enough to be the likely intent, so that a guess never misleads.
 */

/**
 * Edit distance (insertions, deletions, substitutions and swaps of neighbours, each one edit), letters compared without
 * case; a name that differs in case only is half an edit away.
 */
function distance(a: string, b: string): number {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...new Array<number>(y.length).fill(0)])
  for (let j = 1; j <= y.length; j++) d[0][j] = j
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  const n = d[x.length][y.length]
  return n === 0 && a !== b ? 0.5 : n
}

/**
 * The allowed name nearest to `given`, when it is within a third of the longer name's length (at least one edit, at
 * most three; a difference of case only for names of three letters or fewer); undefined when none is that close or
 * two are equally near.
 */
export function nearestName(given: string, allowed: readonly string[]): string | undefined {
  if (given.length === 0 || given.length > 64) return undefined
  let best: string | undefined
  let bestDistance = Infinity
  let tie = false
  for (const name of allowed) {
    // The very name is no suggestion (a whitelisted name that is not a field, say).
    if (name === given) continue
    const d = distance(given, name)
    if (d < bestDistance) {
      best = name
      bestDistance = d
      tie = false
    } else if (d === bestDistance) tie = true
  }
  if (best === undefined || tie) return undefined
  // A third of the name, one to three edits; a name of three letters or fewer only differs in case.
  const longer = Math.max(given.length, best.length)
  const bound = longer <= 3 ? 0.5 : Math.min(3, Math.max(1, Math.floor(longer / 3)))
  return bestDistance <= bound ? best : undefined
}

/** `; did you mean "x"?` for the nearest allowed name, or nothing. */
export function didYouMean(given: string, allowed: readonly string[]): string {
  const near = nearestName(given, allowed)
  return near ? `; did you mean "${near}"?` : ''
}
