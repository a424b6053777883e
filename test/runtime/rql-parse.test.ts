import { t } from '../helpers/file-test.ts'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ApiError } from '../../runtime/core/errors.ts'
import { parseRql, type RqlLimits, type RqlLiteral, type RqlNode, type RqlValue } from '../../runtime/core/rql/index.ts'

/** The ApiError thrown by parsing `input` (fails the test if it parses or throws anything else). */
function err(input: string, limits?: Partial<RqlLimits>): ApiError {
  try {
    parseRql(input, limits)
  } catch (e) {
    if (e instanceof ApiError) return e
    throw new Error(`non-ApiError thrown for ${JSON.stringify(input.slice(0, 80))}: ${String(e)}`)
  }
  throw new Error(`expected ${JSON.stringify(input.slice(0, 80))} to fail`)
}

/** Deep copy without `offset` and `fieldOffset` members, to compare structure only. */
function strip(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(strip)
  if (x instanceof Date || x === null || typeof x !== 'object') return x
  return Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'offset' && k !== 'fieldOffset').map(([k, v]) => [k, strip(v)]))
}

/** The literal of `eq(a,<text>)`. */
function lit(text: string): RqlLiteral {
  const n = parseRql(`eq(a,${text})`)
  assert.equal(n.type, 'cmp')
  return (n as Extract<RqlNode, { type: 'cmp' }>).value
}

const utc = (s: string) => new Date(s)

t.test('comparison operators', async (t) => {
  t.strictSame(parseRql('eq(a,1)'), { type: 'cmp', op: 'eq', field: 'a', fieldOffset: 3, value: { value: 1, bare: '1', offset: 5 }, offset: 0 })
  for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'like', 'ilike'] as const) {
    t.strictSame(strip(parseRql(`${op}(field_1,x)`)), { type: 'cmp', op, field: 'field_1', value: { value: 'x', bare: 'x' } }, op)
  }
  t.strictSame(strip(parseRql('like(name,*foo*)')), { type: 'cmp', op: 'like', field: 'name', value: { value: '*foo*', bare: '*foo*' } })
})

t.test('in/out: variadic and classic forms', async (t) => {
  const variadic = parseRql('in(id,1,2,3)')
  t.strictSame(variadic, {
    type: 'set', op: 'in', field: 'id', fieldOffset: 3, offset: 0,
    values: [{ value: 1, bare: '1', offset: 6 }, { value: 2, bare: '2', offset: 8 }, { value: 3, bare: '3', offset: 10 }],
  })
  const classic = parseRql('in(id,(1,2,3))')
  t.strictSame(classic.type === 'set' && classic.values.map((v) => v.offset), [7, 9, 11])
  t.strictSame(strip(classic), strip(variadic))
  t.strictSame(strip(parseRql('out(name,(x))')), { type: 'set', op: 'out', field: 'name', values: [{ value: 'x', bare: 'x' }] })
  t.strictSame(strip(parseRql('in( id , ( 1 , "b" ) )')), {
    type: 'set', op: 'in', field: 'id', values: [{ value: 1, bare: '1' }, { value: 'b' }],
  })
})

t.test('null tests and logical nesting', async (t) => {
  t.strictSame(parseRql('isNull(namespace)'), { type: 'null', op: 'isNull', field: 'namespace', fieldOffset: 7, offset: 0 })
  t.strictSame(parseRql('isNotNull(b)'), { type: 'null', op: 'isNotNull', field: 'b', fieldOffset: 10, offset: 0 })
  t.strictSame(parseRql('and(eq(a,1),or(isNull(b),gt(c,2)))'), {
    type: 'and', offset: 0, args: [
      { type: 'cmp', op: 'eq', field: 'a', fieldOffset: 7, value: { value: 1, bare: '1', offset: 9 }, offset: 4 },
      { type: 'or', offset: 12, args: [
        { type: 'null', op: 'isNull', field: 'b', fieldOffset: 22, offset: 15 },
        { type: 'cmp', op: 'gt', field: 'c', fieldOffset: 28, value: { value: 2, bare: '2', offset: 30 }, offset: 25 },
      ] },
    ],
  })
  t.strictSame(parseRql('not(eq(a,1))'), {
    type: 'not', offset: 0, arg: { type: 'cmp', op: 'eq', field: 'a', fieldOffset: 7, value: { value: 1, bare: '1', offset: 9 }, offset: 4 },
  })
  t.strictSame(strip(parseRql('and(isNull(a))')), { type: 'and', args: [{ type: 'null', op: 'isNull', field: 'a' }] })
})

t.test('& and | with parentheses', async (t) => {
  t.strictSame(parseRql('eq(a,1)&isNull(b)'), {
    type: 'and', offset: 0, args: [
      { type: 'cmp', op: 'eq', field: 'a', fieldOffset: 3, value: { value: 1, bare: '1', offset: 5 }, offset: 0 },
      { type: 'null', op: 'isNull', field: 'b', fieldOffset: 15, offset: 8 },
    ],
  })
  const eq = (f: string, n: number) => ({ type: 'cmp', op: 'eq', field: f, value: { value: n, bare: String(n) } })
  t.strictSame(strip(parseRql('eq(a,1)|eq(b,2)|eq(c,3)')), { type: 'or', args: [eq('a', 1), eq('b', 2), eq('c', 3)] })
  t.strictSame(strip(parseRql('(eq(a,1)|eq(b,2))&eq(c,3)')), { type: 'and', args: [{ type: 'or', args: [eq('a', 1), eq('b', 2)] }, eq('c', 3)] })
  t.strictSame(strip(parseRql('eq(a,1)|(eq(b,2)&eq(c,3))')), { type: 'or', args: [eq('a', 1), { type: 'and', args: [eq('b', 2), eq('c', 3)] }] })
  t.strictSame(strip(parseRql('((eq(a,1)))')), eq('a', 1))
  t.strictSame(strip(parseRql('and(eq(a,1)&eq(b,2),eq(c,3))')), { type: 'and', args: [{ type: 'and', args: [eq('a', 1), eq('b', 2)] }, eq('c', 3)] })
  t.strictSame(strip(parseRql('not(eq(a,1)|eq(b,2))')), { type: 'not', arg: { type: 'or', args: [eq('a', 1), eq('b', 2)] } })
})

t.test('fieldOffset: where the field name starts, after any whitespace', async (t) => {
  const at = (f: string) => (parseRql(f) as Extract<RqlNode, { fieldOffset: number }>).fieldOffset
  t.equal(at('eq( apiName ,1)'), 4)
  t.equal(at('in(\n\tid,1,2)'), 5)
  t.equal(at('isNull(  b)'), 9)
})

t.test('whitespace is allowed between tokens', async (t) => {
  t.strictSame(strip(parseRql(' and( eq( a , 1 ) ,\n\tisNull( b ) ) ')), strip(parseRql('and(eq(a,1),isNull(b))')))
  t.strictSame(strip(parseRql('eq (a,1) & eq(b,2)')), strip(parseRql('eq(a,1)&eq(b,2)')))
  t.equal(lit(' "a b" ').value, 'a b')
})

t.test('value forms', async (t) => {
  const cases: [string, RqlValue, string | undefined][] = [
    ['5', 5, '5'], ['-1.5', -1.5, '-1.5'], ['1e3', 1000, '1e3'], ['0', 0, '0'], ['2.5E-1', 0.25, '2.5E-1'],
    ['007', '007', '007'], ['+5', '+5', '+5'], ['1e999', '1e999', '1e999'], ['.5', '.5', '.5'],
    ['true', true, 'true'], ['false', false, 'false'], ['null', null, 'null'], ['True', 'True', 'True'],
    ["'single'", 'single', undefined], ['"double"', 'double', undefined], ["'it\\'s'", "it's", undefined],
    ['"a\\\\b"', 'a\\b', undefined], ['"say \\"hi\\""', 'say "hi"', undefined], ["'a\"b'", 'a"b', undefined],
    ["''", '', undefined], ["'a,b)(&|'", 'a,b)(&|', undefined], ["'%20'", '%20', undefined], ["'5'", '5', undefined],
    ['foo%20bar', 'foo bar', 'foo bar'], ['a%2Cb', 'a,b', 'a,b'], ['%74rue', 'true', 'true'], ['caf%C3%A9', 'café', 'café'],
    ['*foo*', '*foo*', '*foo*'], ['a\\b', 'a\\b', 'a\\b'], ['héllo', 'héllo', 'héllo'],
    ['2024-01-31', utc('2024-01-31T00:00:00Z'), '2024-01-31'],
    ['2024-02-29', utc('2024-02-29T00:00:00Z'), '2024-02-29'], ['2000-02-29', utc('2000-02-29T00:00:00Z'), '2000-02-29'],
    ['2024-01-31T10:00:00Z', utc('2024-01-31T10:00:00Z'), '2024-01-31T10:00:00Z'],
    ['2024-01-31T10:00Z', utc('2024-01-31T10:00:00Z'), '2024-01-31T10:00Z'],
    ['2024-01-31T10:00:00.5Z', utc('2024-01-31T10:00:00.500Z'), '2024-01-31T10:00:00.5Z'],
    ['2024-01-31T10:00:00+02:00', utc('2024-01-31T08:00:00Z'), '2024-01-31T10:00:00+02:00'],
    ['2024-01-31T10:00:00-05:30', utc('2024-01-31T15:30:00Z'), '2024-01-31T10:00:00-05:30'],
    ['0099-03-01', utc('0099-03-01T00:00:00Z'), '0099-03-01'],
    ['2024-01-31T10:00:00', '2024-01-31T10:00:00', '2024-01-31T10:00:00'],
    ['2024-01-31x', '2024-01-31x', '2024-01-31x'],
    ['string:123', '123', undefined], ['string:', '', undefined], ['string:true', 'true', undefined],
    ["string:'a b'", 'a b', undefined], ['string:"x"', 'x', undefined], ['string:a%20b', 'a b', undefined],
    ['string:a:b', 'a:b', undefined], ['number:5', 5, undefined], ['number:-1e3', -1000, undefined],
    ["number:'42'", 42, undefined], ['date:2024-01-01', utc('2024-01-01T00:00:00Z'), undefined],
    ['date:2024-01-01T12:00:00Z', utc('2024-01-01T12:00:00Z'), undefined],
    ['boolean:false', false, undefined], ['boolean:true', true, undefined],
    ['constructor:x', 'constructor:x', 'constructor:x'], ['__proto__:x', '__proto__:x', '__proto__:x'],
    ['toString:1', 'toString:1', 'toString:1'], ['String:x', 'String:x', 'String:x'],
    ['http://example.com/a?b=c', 'http://example.com/a?b=c', 'http://example.com/a?b=c'],
  ]
  for (const [text, value, bare] of cases) {
    const l = lit(text)
    t.strictSame(l.value, value, `value of ${text}`)
    t.equal(l.bare, bare, `bare of ${text}`)
    t.equal(l.offset, 5, `offset of ${text}`)
  }
})

t.test('field names: identifiers only, user input is never a map key', async (t) => {
  t.equal((parseRql('eq(__proto__,1)') as { field: string }).field, '__proto__')
  t.equal((parseRql('isNull(constructor)') as { field: string }).field, 'constructor')
  t.equal((parseRql('eq(_a9,1)') as { field: string }).field, '_a9')
  t.equal(err('toString(a,1)').message, 'Unknown operator "toString"')
  t.equal(err('__proto__(a,1)').message, 'Unknown operator "__proto__"')
  t.equal(err('constructor(a)').message, 'Unknown operator "constructor"')
})

t.test('syntax errors: code, reason and offset', async (t) => {
  const cases: [string, number, string][] = [
    ['', 0, 'Empty filter'],
    ['   ', 3, 'Expected an operator, found end of filter'],
    ['eq', 2, 'Expected "(" after "eq", found end of filter'],
    ['eq[a,1]', 2, 'Expected "(" after "eq", found "["'],
    ['a=1', 0, 'Unknown operator "a"'],
    ['eq(a', 4, 'Expected "," after field name, found end of filter'],
    ['eq(a,', 5, 'Expected a value, found end of filter'],
    ['eq(a,)', 5, 'Expected a value, found ")"'],
    ['eq(a,(1))', 5, 'Expected a value, found "("'],
    ['eq(a,1', 6, 'Expected ")" after value, found end of filter; eq() takes a field and one value'],
    ['eq(a,1,2)', 6, 'Expected ")" after value, found ","; eq() takes a field and one value'],
    ['eq(a,1))', 7, 'Unexpected ")"; expected "&", "|" or end of filter'],
    ['eq(a,1) eq(b,2)', 8, 'Unexpected "e"; expected "&", "|" or end of filter'],
    ['foo(a,1)', 0, 'Unknown operator "foo"'],
    ['and(eq(a,1),ISNULL(b))', 12, 'Unknown operator "ISNULL" (did you mean "isNull"?)'],
    ['EQ(a,1)', 0, 'Unknown operator "EQ" (did you mean "eq"?)'],
    ['eq(t.id,1)', 4, 'Expected "," after field name, found "."'],
    ['eq("id) OR (1=1",1)', 3, 'Expected a field name, found "\\""'],
    ['eq(1a,1)', 3, 'Expected a field name, found "1"'],
    ['eq(é,1)', 3, 'Expected a field name, found "é"'],
    ['eq(a,"abc)', 5, 'Unterminated quoted string'],
    ["eq(name,'x'' OR 1=1 --')", 11, 'Expected ")" after value, found "\'"; eq() takes a field and one value'],
    ['eq(a,"a\\nb")', 7, 'Invalid escape in quoted string; only \\\\, \\\' and \\" are allowed'],
    ['eq(a,"abc\\', 9, 'Invalid escape in quoted string; only \\\\, \\\' and \\" are allowed'],
    ["eq(a,x'y')", 6, 'Unexpected quote inside an unquoted value'],
    ["eq(a,number:5'6')", 13, 'Unexpected quote inside an unquoted value'],
    ['eq(a,foo bar)', 9, 'Expected ")" after value, found "b"; eq() takes a field and one value'],
    ['eq(a,%zz)', 5, 'Invalid percent-encoding in "%zz"; write a literal % as %25 or quote the value'],
    ['eq(a,50%)', 5, 'Invalid percent-encoding in "50%"; write a literal % as %25 or quote the value'],
    ['eq(a,2024-02-30)', 5, 'Invalid date "2024-02-30"'],
    ['eq(a,2023-02-29)', 5, 'Invalid date "2023-02-29"'],
    ['eq(a,1900-02-29)', 5, 'Invalid date "1900-02-29"'],
    ['eq(a,2024-13-01)', 5, 'Invalid date "2024-13-01"'],
    ['eq(a,0000-01-01)', 5, 'Invalid date "0000-01-01"'],
    ['eq(a,2024-01-31T24:00:00Z)', 5, 'Invalid date "2024-01-31T24:00:00Z"'],
    ['eq(a,2024-01-31T10:00:00+24:00)', 5, 'Invalid date "2024-01-31T10:00:00+24:00"'],
    ['eq(a,number:abc)', 5, 'Invalid number "abc"'],
    ['eq(a,number:)', 5, 'Invalid number ""'],
    ['eq(a,number:1e999)', 5, 'Invalid number "1e999"'],
    ['eq(a,boolean:yes)', 5, 'Invalid boolean "yes"; expected true or false'],
    ['eq(a,date:2024-01-31T10:00:00)', 5, 'Invalid date "2024-01-31T10:00:00"'],
    ['eq(a,date:yesterday)', 5, 'Invalid date "yesterday"'],
    ['in(id)', 5, 'Expected "," after field name, found ")"'],
    ['in(id,)', 6, 'Expected a value, found ")"'],
    ['in(id,())', 7, 'Expected a value, found ")"'],
    ['in(id,1,)', 8, 'Expected a value, found ")"'],
    ['in(id,(1,2),3)', 11, 'Expected ")" after the value list, found ","'],
    ['in(id,(1,2)', 11, 'Expected ")" after the value list, found end of filter'],
    ['in(id,(1 2))', 9, 'Expected "," or ")" after value, found "2"'],
    ['isNull()', 7, 'Expected a field name, found ")"'],
    ['isNull(a,b)', 8, 'Expected ")" after field name, found ","; isNull() takes one field'],
    ['not(eq(a,1),eq(b,2))', 11, 'Expected ")", found ","; not() takes exactly one argument'],
    ['and()', 4, 'Expected an operator, found ")"'],
    ['and(eq(a,1),)', 12, 'Expected an operator, found ")"'],
    ['and(eq(a,1)', 11, 'Expected "," or ")", found end of filter'],
    ['eq(a,1)&', 8, 'Expected an operator, found end of filter'],
    ['eq(a,1)&,', 8, 'Expected an operator, found ","'],
    ['eq(a,1)&eq(b,2)|eq(c,3)', 15, 'Cannot mix "&" and "|" without parentheses'],
    ['(eq(a,1)', 8, 'Expected ")", found end of filter'],
    ['()', 1, 'Expected an operator, found ")"'],
    [')', 0, 'Expected an operator, found ")"'],
  ]
  for (const [input, offset, message] of cases) {
    const e = err(input)
    t.equal(e.code, 'filter_parse_error', `code of ${input}`)
    t.equal(e.status, 400)
    t.equal(e.message, message, `message of ${input}`)
    t.strictSame(e.extras, { parameter: 'filter', offset }, `extras of ${input}`)
  }
})

const nest = (n: number, open = 'not(') => open.repeat(n) + 'eq(a,1)' + ')'.repeat(n)

t.test('limits', async (t) => {
  const tooComplex = (input: string, offset: number, message: string, limits?: Partial<RqlLimits>) => {
    const e = err(input, limits)
    t.equal(e.code, 'filter_too_complex', `code: ${message}`)
    t.equal(e.message, message)
    t.strictSame(e.extras, { parameter: 'filter', offset })
  }
  const exact = `eq(a,'${'x'.repeat(4088)}')`
  t.equal(exact.length, 4096)
  t.equal(parseRql(exact).type, 'cmp')
  tooComplex(exact + ' ', 4096, 'Filter is longer than 4096 characters')
  tooComplex('eq(a,1)', 6, 'Filter is longer than 6 characters', { maxLength: 6 })

  t.equal(parseRql(nest(32)).type, 'not')
  tooComplex(nest(33), 128, 'Filter is nested more than 32 levels deep')
  t.equal(parseRql(nest(32, '(')).type, 'cmp')
  tooComplex(nest(33, '('), 32, 'Filter is nested more than 32 levels deep')
  t.equal(parseRql('and(' + nest(31) + ')').type, 'and')
  tooComplex('and(' + nest(32) + ')', 128, 'Filter is nested more than 32 levels deep')
  t.equal(parseRql(nest(32) + '&' + nest(32)).type, 'and', 'an infix chain adds no nesting level')
  tooComplex(nest(3), 8, 'Filter is nested more than 2 levels deep', { maxDepth: 2 })

  tooComplex('and(eq(a,1),eq(b,2),eq(c,3))', 20, 'Filter has more than 3 conditions', { maxNodes: 3 })
  t.equal(parseRql('and(eq(a,1),eq(b,2))', { maxNodes: 3 }).type, 'and')
  const chain = (n: number) => Array.from({ length: n }, () => 'eq(a,1)').join('&')
  t.equal(parseRql(chain(511), { maxLength: Infinity }).type, 'and')
  tooComplex(chain(512), 4088, 'Filter has more than 512 conditions', { maxLength: Infinity })

  const list = (n: number) => Array.from({ length: n }, () => '1').join(',')
  t.equal(parseRql(`in(id,${list(1000)})`).type, 'set')
  t.equal(parseRql(`out(id,(${list(1000)}))`).type, 'set')
  tooComplex(`in(id,${list(1001)})`, 2006, 'More than 1000 values in one in()/out()')
  tooComplex(`in(id,(${list(1001)}))`, 2007, 'More than 1000 values in one in()/out()')
  tooComplex('in(id,1,2,3)', 10, 'More than 2 values in one in()/out()', { maxValues: 2 })

  // Pattern matching: how many patterns, their wildcards and their length.
  const patterns = (n: number) => 'or(' + Array.from({ length: n }, (_, i) => `ilike(label,*a${i}*)`).join(',') + ')'
  t.equal(parseRql(patterns(8)).type, 'or', '8 like/ilike conditions')
  tooComplex(patterns(9), patterns(9).lastIndexOf('*a8*'), 'Filter has more than 8 like/ilike conditions')
  const stars = (n: number) => `ilike(label,${'*e'.repeat(n)})`
  t.equal(parseRql(stars(6)).type, 'cmp', '6 wildcards')
  tooComplex(stars(7), 12, 'A like/ilike pattern may have at most 6 * wildcards')
  tooComplex(`like(label,'${'*x'.repeat(50)}')`, 11, 'A like/ilike pattern may have at most 6 * wildcards')
  t.equal(parseRql(`like(label,'${'x'.repeat(200)}')`).type, 'cmp', 'a pattern of 200 characters')
  tooComplex(`like(label,'${'x'.repeat(201)}')`, 11, 'A like/ilike pattern may be at most 200 characters')
  t.equal(parseRql(`eq(label,'${'x'.repeat(2000)}')`).type, 'cmp', 'the pattern limits are for like/ilike only')
  t.equal(parseRql(`in(label,${Array.from({ length: 20 }, () => '*a*b*c*d*e*f*g*h').join(',')})`).type, 'set', 'and * means nothing outside like/ilike')
})

t.test('control characters in values are rejected at the value', async (t) => {
  for (const [input, offset] of [
    ['eq(name,a%00b)', 8],
    ["eq(name,'a\u0000b')", 8],
    ['eq(name,"line1\nline2")', 8],
    ['in(name,a,b%07c)', 10],
    ['eq(name,string:%1F)', 8],
    ['ilike(name,*%7F*)', 11],
  ] as const) {
    const input2 = input.replace('\\u0000', '\u0000').replace('\\n', '\n')
    const e = err(input2)
    t.equal(e.code, 'filter_parse_error', input)
    t.equal(e.extras.offset, offset, `${input}: offset of the value`)
    t.match(e.message, /^Control character U\+00[0-9A-F]{2} in a value$/)
  }
  t.equal(parseRql('and(eq(a,1),\n\teq(b,2))').type, 'and', 'tabs and newlines between tokens are whitespace')
})

t.test('hostile sizes fail fast with filter_too_complex', async (t) => {
  // Rejected for their length, before any scanning: the nesting of 100,000 parentheses is never reached.
  for (const input of ['eq(a,' + 'x'.repeat(100_000) + ')', '('.repeat(100_000)]) {
    const e = err(input)
    t.equal(e.code, 'filter_too_complex')
    t.equal(e.message, 'Filter is longer than 4096 characters', '100 KB inputs are rejected for their length, before scanning')
  }

  const deep = nest(10_000)
  t.equal(err(deep, { maxLength: Infinity }).code, 'filter_too_complex')
  t.equal(err('('.repeat(10_000) + 'eq(a,1)' + ')'.repeat(10_000), { maxLength: Infinity }).code, 'filter_too_complex')
  const capped = err(deep, { maxLength: Infinity, maxDepth: 1e9 })
  t.equal(capped.code, 'filter_too_complex', 'the hard depth cap applies whatever the configured limit')
  t.equal(capped.message, 'Filter is nested more than 256 levels deep')

  // Linear time with the length limit lifted: ~1 MB of each shape. Not timed (a loaded machine makes any bound flaky):
  // a parser quadratic in any of these shapes would take hours on them, far past the file's timeout.
  const big = { maxLength: Infinity, maxNodes: Infinity, maxValues: Infinity }
  const q = parseRql(`eq(a,'${'ab\\\'c'.repeat(200_000)}')`, big)
  t.equal(q.type === 'cmp' && (q.value.value as string).length, 800_000)
  t.equal(parseRql(`eq(a,${'x%20'.repeat(250_000)})`, big).type, 'cmp')
  t.equal(parseRql(Array.from({ length: 100_000 }, () => 'eq(a,1)').join('|'), big).type, 'or')
  t.equal(parseRql(`in(a,${Array.from({ length: 200_000 }, (_, i) => String(i)).join(',')})`, big).type, 'set')
})

t.test('non-string input is a parse error', async (t) => {
  t.equal(err(['eq(a,1)'] as unknown as string).code, 'filter_parse_error')
})

// ---- property-based ----

function expectOnlyApiErrors(input: string): void {
  try {
    parseRql(input)
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    if (e.code !== 'filter_parse_error' && e.code !== 'filter_too_complex') throw new Error(`unexpected code ${e.code}`)
    const off = e.extras.offset
    if (typeof off !== 'number' || !Number.isInteger(off) || off < 0 || off > input.length) throw new Error(`bad offset ${off}`)
  }
}

t.test('property: arbitrary input only ever raises filter_parse_error / filter_too_complex', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), expectOnlyApiErrors), { numRuns: 2000 })
  const alphabet = fc.constantFrom(...'()(),,,&|:\'"*\\% -.eqnotandorinisNulltrue0123456789abTZ'.split(''),
    'eq(', 'in(', 'and(', 'or(', 'not(', 'isNull(', 'like(', 'string:', 'number:', 'date:', '2024-01-31', '%2', '%C3%A9')
  fc.assert(fc.property(fc.array(alphabet, { maxLength: 60 }).map((a) => a.join('')), expectOnlyApiErrors), { numRuns: 5000 })
  t.pass('no other exception escaped')
})

/** Serialises an AST to RQL text (call form, with optional infix and classic-list variants). */
function serialize(n: RqlNode, infix: boolean): string {
  switch (n.type) {
    case 'and': case 'or':
      if (infix && n.args.length > 1) return '(' + n.args.map((a) => serialize(a, infix)).join(n.type === 'and' ? '&' : '|') + ')'
      return `${n.type}(${n.args.map((a) => serialize(a, infix)).join(',')})`
    case 'not': return `not(${serialize(n.arg, infix)})`
    case 'null': return `${n.op}(${n.field})`
    case 'cmp': return `${n.op}(${n.field},${literal(n.value)})`
    case 'set': {
      const vals = n.values.map(literal).join(', ')
      return infix ? `${n.op}(${n.field},(${vals}))` : `${n.op}( ${n.field} ,${vals})`
    }
  }
}

/** Bare literals carry their source text; others are written quoted (strings) or prefixed. */
function literal(l: RqlLiteral): string {
  const v = l.value
  if (l.bare !== undefined) return typeof v === 'string' ? bareEncode(l.bare) : l.bare
  if (typeof v === 'string') return `'${v.replace(/[\\']/g, '\\$&')}'`
  if (typeof v === 'number') return `number:${v}`
  if (typeof v === 'boolean') return `boolean:${v}`
  if (v instanceof Date) return `date:${v.toISOString()}`
  throw new Error('null is always bare')
}

/** Percent-encodes everything but unreserved characters, so the bare token decodes back to `s`. */
function bareEncode(s: string): string {
  return Array.from(s, (ch) => (/^[A-Za-z0-9_.~*-]$/.test(ch) ? ch : [...Buffer.from(ch, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join(''))).join('')
}

const field = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0))
const date = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
/** Characters that matter to the syntax, mixed with arbitrary ones. */
const special = fc.constantFrom(...'\'"\\(),&|*%: '.split(''), '%20', 'é', '😀')
/** Values never hold control characters (the parser rejects them; see the property below). */
const CONTROL = /[\u0000-\u001f\u007f]/
const text = (unit: 'binary' | 'grapheme') =>
  fc.string({ unit: fc.oneof(special, fc.string({ unit, minLength: 1, maxLength: 1 }).filter((c) => !CONTROL.test(c))), maxLength: 12 })
const literalArb: fc.Arbitrary<Omit<RqlLiteral, 'offset'>> = fc.oneof(
  text('binary').map((s) => ({ value: s })),
  text('grapheme').map((s) => ({ value: 's' + s, bare: 's' + s })),
  finite.map((x) => ({ value: x, bare: String(x) })),
  finite.map((x) => ({ value: x })),
  fc.boolean().map((b) => ({ value: b, bare: String(b) })),
  fc.boolean().map((b) => ({ value: b })),
  fc.constant({ value: null, bare: 'null' }),
  date.map((d) => ({ value: d, bare: d.toISOString() })),
  date.map((d) => ({ value: d })),
)
const cmpOp = fc.constantFrom('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'like', 'ilike' as const)
const { node: nodeArb } = fc.letrec<{ node: RqlNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constant('cmp' as const), op: cmpOp, field, value: literalArb }),
    fc.record({ type: fc.constant('set' as const), op: fc.constantFrom('in' as const, 'out' as const), field, values: fc.array(literalArb, { minLength: 1, maxLength: 4 }) }),
    fc.record({ type: fc.constant('null' as const), op: fc.constantFrom('isNull' as const, 'isNotNull' as const), field }),
    fc.record({ type: fc.constant('not' as const), arg: tie('node') }),
    fc.record({ type: fc.constantFrom('and' as const, 'or' as const), args: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
  ) as unknown as fc.Arbitrary<RqlNode>,
}))

t.test('property: generated ASTs serialised to RQL parse back to an equal AST', async (t) => {
  const big = { maxLength: Infinity, maxNodes: Infinity, maxPatterns: Infinity, maxWildcards: Infinity, maxPatternLength: Infinity }
  fc.assert(fc.property(nodeArb, fc.boolean(), (ast, infix) => {
    const text = serialize(ast, infix)
    assert.deepStrictEqual(strip(parseRql(text, big)), strip(ast), text)
  }), { numRuns: 1500 })
  t.pass('round trip holds')
})

t.test('property: valid filters with random edits only ever raise filter_parse_error / filter_too_complex', async (t) => {
  const edit = fc.tuple(fc.nat(), fc.nat(3), fc.oneof(special, fc.constantFrom('eq(', ')', ',', 'string:', 'date:', '1', '-')))
  fc.assert(fc.property(nodeArb, fc.boolean(), fc.array(edit, { minLength: 1, maxLength: 4 }), (ast, infix, edits) => {
    let text = serialize(ast, infix)
    for (const [at, del, ins] of edits) {
      const i = at % (text.length + 1)
      text = text.slice(0, i) + ins + text.slice(i + del)
    }
    expectOnlyApiErrors(text)
  }), { numRuns: 3000 })
  t.pass('no other exception escaped')
})
