// The version this binary reports (`server --version`, /metrics) and records in a database it migrates.
import { version } from '../package.json'

export const VERSION: string = version
