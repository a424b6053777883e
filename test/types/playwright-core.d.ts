// playwright-core is a test tool, installed on first need outside node_modules (test/helpers/test-tools.ts), so its
// own declarations are not there when the project is type-checked: these declare the part the page tests use.
declare module 'playwright-core' {
  export interface Locator {
    locator(selector: string, options?: { has?: Locator }): Locator
    first(): Locator
    count(): Promise<number>
    textContent(): Promise<string | null>
    fill(value: string): Promise<void>
    click(): Promise<void>
    waitFor(options?: { timeout?: number }): Promise<void>
  }
  export interface Request {
    url(): string
  }
  export interface Response {
    status(): number
    headers(): Record<string, string>
  }
  export interface Page {
    goto(url: string): Promise<Response | null>
    url(): string
    content(): Promise<string>
    close(): Promise<void>
    locator(selector: string, options?: { has?: Locator }): Locator
    textContent(selector: string): Promise<string | null>
    fill(selector: string, value: string): Promise<void>
    click(selector: string): Promise<void>
    screenshot(options: { path: string; fullPage?: boolean }): Promise<Buffer>
    waitForURL(url: RegExp | string): Promise<void>
    waitForSelector(selector: string, options?: { timeout?: number }): Promise<unknown>
    waitForLoadState(): Promise<void>
    waitForEvent(event: 'popup'): Promise<Page>
    on(event: 'request', listener: (request: Request) => void): Page
    $$eval<R>(selector: string, fn: (elements: Element[]) => R): Promise<R>
    evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>
  }
  export interface Browser {
    newPage(): Promise<Page>
    close(): Promise<void>
  }
  export const chromium: { launch(options: { executablePath: string; args?: string[] }): Promise<Browser> }
}
