/**
 * Checks real responses against the generated OpenAPI document: the response schema of the path template that the
 * URL matches and of the status it answered (a shared response's $ref followed), with ajv (JSON Schema 2020-12).
 * Used by the docs test and by the REST conformance suite, so every response those suites receive is also a
 * check that the document and the server agree.
 */
import Ajv2020Module from 'ajv/dist/2020.js'
import { registry } from '../../resources/index.ts'
import { compileRegistry } from '../../runtime/core/registry.ts'
import { buildOpenApi } from '../../runtime/surfaces/docs/openapi.ts'

export type OpenApiDoc = { paths: Record<string, { get: { responses: Record<string, any> } }>; components: { responses: Record<string, any> } }

export interface SchemaChecker {
  /** The schema problem of this answer, or undefined when it matches; throws when the document has no such path or status. */
  problem(url: string, status: number, body: unknown): string | undefined
  /** The validator of a template's answer to `status`. */
  validatorFor(template: string, status: number): ((body: unknown) => boolean) & { errors?: unknown }
  /** How many answers were checked. */
  checked: number
}

export function openApiChecker(doc: OpenApiDoc = buildOpenApi(compileRegistry(registry)) as OpenApiDoc): SchemaChecker {
  const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module }).default ?? Ajv2020Module
  const ajv = new (Ajv2020 as any)({ strict: false, validateFormats: false, allErrors: true })
  ajv.addSchema(doc, 'openapi')
  const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')
  // Templates with fewer parameters first, so /objects/{objectId}/fields is not taken for /fields/{fieldId}.
  const templates = Object.keys(doc.paths)
    .map((p) => ({ p, re: new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$'), params: (p.match(/\{/g) ?? []).length }))
    .sort((a, b) => a.params - b.params)
  const validatorFor = (template: string, status: number) => {
    const r = doc.paths[template]?.get.responses[String(status)]
    if (!r) throw new Error(`the document has no ${status} answer for ${template}`)
    const at = r.$ref ? `#/components/responses/${r.$ref.split('/').pop()}` : `#/paths/${pointer(template)}/get/responses/${status}`
    return ajv.getSchema(`openapi${at}/content/application~1json/schema`)!
  }
  const checker: SchemaChecker = {
    checked: 0,
    validatorFor,
    problem(url, status, body) {
      const path = new URL(url, 'http://x').pathname
      const template = templates.find((x) => x.re.test(path))?.p
      if (!template) return `${path}: no path of the document matches`
      let validate
      try {
        validate = validatorFor(template, status)
      } catch (e) {
        return `${path}: ${(e as Error).message}`
      }
      checker.checked++
      return validate(body) ? undefined : `${url} ${status}: ${ajv.errorsText(validate.errors)}`
    },
  }
  return checker
}
