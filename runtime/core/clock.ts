/** The service's clock (injectable, so the version lifecycle and quota windows are testable): milliseconds since the epoch. */
export type Clock = () => number
