// Where each value of a JSON text starts: its path, as the experiments' validation names it (`[3].populations[0].e`),
// to the line it is on (1-based). Read leniently: a text that does not parse gives the paths read up to the fault.

/** Path → line of every value in `source`. */
export function jsonLines(source: string): Map<string, number> {
  const found = new Map<string, number>()
  const newlines: number[] = []
  for (let p = source.indexOf('\n'); p !== -1; p = source.indexOf('\n', p + 1)) newlines.push(p)
  const lineAt = (pos: number) => {
    let lo = 0
    let hi = newlines.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (newlines[mid]! < pos) lo = mid + 1
      else hi = mid
    }
    return lo + 1
  }
  let i = 0
  const space = () => {
    while (i < source.length && ' \t\r\n'.includes(source[i]!)) i++
  }
  const STRING = /"(?:[^"\\]|\\.)*"/y
  const LITERAL = /[^,\]}\s]*/y
  const string = (): string => {
    STRING.lastIndex = i
    const m = STRING.exec(source)
    if (!m) throw new Error('string expected')
    i = STRING.lastIndex
    return JSON.parse(m[0]) as string
  }
  const value = (path: string): void => {
    space()
    found.set(path, lineAt(i))
    const c = source[i]
    if (c === '{' || c === '[') {
      const object = c === '{'
      i++
      space()
      if (source[i] === (object ? '}' : ']')) return void i++
      for (let n = 0; ; n++) {
        space()
        if (object) {
          const key = string()
          space()
          if (source[i++] !== ':') throw new Error(': expected')
          value(`${path}.${key}`)
        } else value(`${path}[${n}]`)
        space()
        const next = source[i++]
        if (next === ',') continue
        if (next === (object ? '}' : ']')) return
        throw new Error(', expected')
      }
    }
    if (c === '"') return void string()
    LITERAL.lastIndex = i
    LITERAL.exec(source)
    i = LITERAL.lastIndex
  }
  try {
    value('')
  } catch {}
  return found
}

/** The line a validation problem (`<path>: <message>`) concerns: its path's, or its nearest parent's. */
export function problemLine(lines: Map<string, number>, problem: string): number | undefined {
  let path = problem.slice(0, Math.max(0, problem.indexOf(': ')))
  while (path) {
    const line = lines.get(path)
    if (line !== undefined) return line
    path = path.replace(/(\.[^.[\]]*|\[\d+\])$/, '')
  }
  return lines.get('')
}
