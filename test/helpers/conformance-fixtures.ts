/**
 * The tools, prompts and resources of the official MCP conformance suite's reference server, under its names, for
 * test/mcp/mcp-conformance.test.ts to register (`mcpExtraTools`, `mcpExtraPrompts`, `mcpExtraResources`): orgscan's own
 * catalog has none of them and never will (its tool list is paid for by the character). Where it makes sense a
 * fixture answers through orgscan's real machinery: a real tool's result, a real bad_filter error, log messages and
 * progress sent the way a tool sends them (ToolContext), questions asked the client through ToolContext `sample` and
 * `elicit`, orgscan's own resources embedded or served. Images and audio have no counterpart in orgscan: those are
 * the smallest valid files.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { McpTool } from '../../runtime/surfaces/mcp/resource-tools.ts'
import type { McpExtraFixedResource, McpExtraPrompt, McpExtraResource, McpExtraTemplate } from '../../runtime/surfaces/mcp/extras.ts'

/** A 1×1 PNG. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='

/** A WAV file of eight silent samples (8 kHz, mono, 8 bits). */
export const WAV = (() => {
  const samples = Buffer.alloc(8, 128)
  const h = Buffer.alloc(44)
  h.write('RIFF', 0)
  h.writeUInt32LE(36 + samples.length, 4)
  h.write('WAVEfmt ', 8)
  h.writeUInt32LE(16, 16)
  h.writeUInt16LE(1, 20)
  h.writeUInt16LE(1, 22)
  h.writeUInt32LE(8000, 24)
  h.writeUInt32LE(8000, 28)
  h.writeUInt16LE(1, 32)
  h.writeUInt16LE(8, 34)
  h.write('data', 36)
  h.writeUInt32LE(samples.length, 40)
  return Buffer.concat([h, samples]).toString('base64')
})()

const via = (name: string, args: unknown): McpTool['run'] => (_a, ctx) => ctx.callTool(name, args)
const noArgs = { type: 'object' } as const
const probe = (name: string, description: string, run: McpTool['run'], inputSchema: McpTool['definition']['inputSchema'] = noArgs): McpTool => ({
  definition: { name, description: `Conformance probe: ${description}`, inputSchema },
  scope: 'mcp:read',
  run,
})
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] })
/** A refusal of the fixture's own: the client cannot be asked what the scenario needs. */
const cannot = (what: string): CallToolResult => ({ content: [{ type: 'text', text: `The client did not declare ${what}, so it cannot be asked.` }], isError: true })

/** server_info's answer as an embedded JSON resource: the real tool's record, under the address the suite names. */
async function serverInfoResource(uri: string, ctx: Parameters<McpTool['run']>[1]) {
  const info = await ctx.callTool('server_info', {})
  return { type: 'resource' as const, resource: { uri, mimeType: 'application/json', text: JSON.stringify(info.structuredContent) } }
}

export const conformanceTools: McpTool[] = [
  probe('test_simple_text', 'answers with server_info.', via('server_info', {})),
  probe('test_error_handling', 'answers with a rejected filter.', via('list_orgs', { filter: 'eq(' })),
  // Three messages 50 ms apart through the tools' own log (ToolContext.log), then the real tool's answer and its line.
  probe('test_tool_with_logging', 'logs three messages during the call, then answers with server_info.', async (_a, ctx) => {
    ctx.log?.('info', 'Tool execution started')
    await sleep(50)
    ctx.log?.('info', 'Tool processing data')
    await sleep(50)
    ctx.log?.('info', 'Tool execution completed')
    return ctx.callTool('server_info', {})
  }),
  // Progress 0, 50 and 100 of 100 through ToolContext.progress (sent only when the request carried a token), the
  // real tool's read between the first two.
  probe('test_tool_with_progress', 'reports progress three times, then answers with server_info.', async (_a, ctx) => {
    ctx.progress?.(0, 100, 'started')
    const info = await ctx.callTool('server_info', {})
    await sleep(50)
    ctx.progress?.(50, 100, 'read server_info')
    await sleep(50)
    ctx.progress?.(100, 100, 'done')
    return info
  }),
  probe('json_schema_2020_12_tool', 'JSON Schema 2020-12 keywords in an input schema.', via('server_info', {}), {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
    additionalProperties: false,
  }),
  probe('test_image_content', 'answers with an image.', async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] })),
  probe('test_audio_content', 'answers with audio.', async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] })),
  probe('test_embedded_resource', "answers with server_info's record as an embedded resource.", async (_a, ctx) => ({ content: [await serverInfoResource('test://embedded-resource', ctx)] })),
  probe('test_multiple_content_types', "answers with text, an image and server_info's record as an embedded resource.", async (_a, ctx) => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      await serverInfoResource('test://mixed-content-resource', ctx),
    ],
  })),
  // Asks the client's model through ToolContext.sample (sampling/createMessage), and answers with what it said.
  probe('test_sampling', 'asks the client for a completion of the prompt.', async (args, ctx) => {
    if (!ctx.sample) return cannot('sampling')
    const prompt = String((args as { prompt?: unknown }).prompt ?? '')
    const r = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 })
    const said = !Array.isArray(r.content) && r.content.type === 'text' ? r.content.text : JSON.stringify(r.content)
    return text(`LLM response: ${said}`)
  }, { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] }),
  elicitation('test_elicitation', 'asks the user for a name and an e-mail address.', (args) => ({
    message: String((args as { message?: unknown }).message ?? ''),
    requestedSchema: { type: 'object', properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } }, required: ['username', 'email'] },
  }), { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, 'User response'),
  elicitation('test_elicitation_sep1034_defaults', 'asks the user for fields of every primitive type, each with a default.', () => ({
    message: 'Test client default value handling - please accept with defaults',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    },
  })),
  elicitation('test_elicitation_sep1330_enums', 'asks the user with the five enum forms.', () => ({
    message: 'Test enum schema variants',
    requestedSchema: {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', description: 'Titled single-select', oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }] },
        legacyEnum: { type: 'string', description: 'Legacy titled enum', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', description: 'Untitled multi-select', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', description: 'Titled multi-select', items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] } },
      },
      required: [],
    },
  })),
]

/** A probe asking the user through ToolContext.elicit (elicitation/create, form mode) and answering with the outcome. */
function elicitation(name: string, description: string, request: (args: unknown) => { message: string; requestedSchema: object }, inputSchema: McpTool['definition']['inputSchema'] = noArgs, said = 'Elicitation completed'): McpTool {
  return probe(name, description, async (args, ctx) => {
    if (!ctx.elicit) return cannot('elicitation')
    const r = await ctx.elicit(request(args) as Parameters<NonNullable<typeof ctx.elicit>>[0])
    return text(`${said}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`)
  }, inputSchema)
}

export const conformancePrompts: McpExtraPrompt[] = [
  {
    definition: { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'Conformance fixture: a prompt without arguments.' },
    get: async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] }),
  },
  {
    definition: {
      name: 'test_prompt_with_arguments',
      title: 'Prompt With Arguments',
      description: 'Conformance fixture: a prompt with two required arguments.',
      arguments: [{ name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }],
    },
    get: async (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` } }] }),
    complete: (argument, prefix) => (argument === 'arg1' || argument === 'arg2' ? ['test', 'testValue1', 'testValue2'] : []).filter((v) => v.startsWith(prefix)),
  },
  // Embeds orgscan's own resource when the address is one (service://rql, a filter-values lookup), else a text.
  {
    definition: {
      name: 'test_prompt_with_embedded_resource',
      title: 'Prompt With Embedded Resource',
      description: 'Conformance fixture: a prompt embedding the resource at resourceUri.',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    },
    get: async (args, ctx) => {
      const own = ctx.readResource(args.resourceUri)?.contents[0]
      const resource = own ?? { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' }
      return { messages: [{ role: 'user', content: { type: 'resource', resource } }, { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }] }
    },
  },
  {
    definition: { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'Conformance fixture: a prompt with an image.' },
    get: async () => ({ messages: [{ role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } }, { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }] }),
  },
]

const fixed = (r: McpExtraFixedResource) => r
const template = (r: McpExtraTemplate) => r

export const conformanceResources: McpExtraResource[] = [
  // orgscan's filter grammar (service://rql), served under the suite's address.
  fixed({
    definition: { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', description: "Conformance fixture: orgscan's filter grammar as text.", mimeType: 'text/markdown' },
    read: async (uri, ctx) => {
      const rql = ctx.readResource('service://rql')!.contents[0] as { text: string }
      return { contents: [{ uri, mimeType: 'text/markdown', text: rql.text }] }
    },
  }),
  fixed({
    definition: { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', description: 'Conformance fixture: a PNG image.', mimeType: 'image/png' },
    read: async (uri) => ({ contents: [{ uri, mimeType: 'image/png', blob: PNG }] }),
  }),
  fixed({
    definition: { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', description: 'Conformance fixture: a resource to subscribe to.', mimeType: 'text/plain' },
    read: async (uri) => ({ contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] }),
  }),
  template({
    definition: { uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'Conformance fixture: a template whose id is substituted.', mimeType: 'application/json' },
    read: async (uri, _ctx, vars) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: vars.id, templateTest: true, data: `Data for ID: ${vars.id}` }) }] }),
  }),
]
