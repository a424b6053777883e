/**
 * The query strings the service writes (runtime/core/query-string.ts): what a URL parser reads back is what was given,
 * RQL's punctuation stays literal, and a browser or fetch sends the string as it is.
 */
import { t } from '../helpers/file-test.ts'
import fc from 'fast-check'
import { encodeQueryComponent, formatQuery } from '../../runtime/core/query-string.ts'

t.test('RQL and sort lists read as they are written; what would end or change a pair is encoded', async (t) => {
  t.equal(formatQuery([['filter', ['and(eq(type,Picklist),gt(createdDate,2024-01-01T00:00:00Z))']], ['sort', ['-percentPopulated,apiName']]]), 'filter=and(eq(type,Picklist),gt(createdDate,2024-01-01T00:00:00Z))&sort=-percentPopulated,apiName')
  t.equal(encodeQueryComponent("ne(label,'A b&c=d+e%f#g')"), 'ne(label,%27A%20b%26c%3Dd%2Be%25f%23g%27)')
  t.equal(encodeQueryComponent('é😀'), '%C3%A9%F0%9F%98%80', 'UTF-8')
  t.equal(encodeQueryComponent('a\ud800b'), 'a%EF%BF%BDb', 'a lone surrogate is U+FFFD, as URLSearchParams writes it')
  t.equal(formatQuery([['license', ['a,b', 'c']]]), 'license=a,b&license=c', 'each value its own pair')
  t.equal(formatQuery([]), '')
})

t.test('any names and values: URLSearchParams reads back what was given, and a WHATWG URL leaves the string as it is', async (t) => {
  // Well-formed strings only: a lone surrogate cannot be read back (it is written as U+FFFD).
  const text = fc.string({ unit: 'grapheme', maxLength: 20 })
  fc.assert(
    fc.property(fc.array(fc.tuple(text, fc.array(text, { minLength: 1, maxLength: 3 })), { maxLength: 4 }), (params) => {
      const qs = formatQuery(params)
      const back = [...new URLSearchParams(qs)]
      const given = params.flatMap(([k, vs]) => vs.map((v) => [k, v]))
      if (JSON.stringify(back) !== JSON.stringify(given)) throw new Error(`${qs} reads back as ${JSON.stringify(back)}`)
      const url = new URL(`http://host/p?${qs}`)
      if (qs !== '' && url.search !== `?${qs}`) throw new Error(`a URL rewrites ${qs} as ${url.search}`)
    }),
    { numRuns: 500 },
  )
  t.pass('500 random queries')
})
