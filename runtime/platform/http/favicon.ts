/**
 * `GET /favicon.ico` on every listener: browsers ask for it on any page they show (the reference page, the sign-in
 * pages, a JSON answer opened in a tab), and a 404 there is an error in every console. Unauthenticated, free,
 * cached for a day.
 *
 * The icon is a magnifying glass on the sign-in pages' blue, drawn as this SVG and rendered at 16 and 32 px into
 * PNG entries of one ICO (every current browser reads PNG entries):
 *   <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b69a3"/>
 *   <circle cx="14" cy="14" r="7" fill="none" stroke="#fff" stroke-width="3.2"/>
 *   <path d="M19 19l6.5 6.5" stroke="#fff" stroke-width="3.6" stroke-linecap="round"/></svg>
 */
import type { ServerResponse } from 'node:http'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import type { Routes } from '../../core/http/routes.ts'

const ICO = Buffer.from(
  [
    'AAABAAIAEBAAAAEAIABDAgAAJgAAACAgAAABACAAzQMAAGkCAACJUE5HDQoaCgAAAA1JSERSAAAAEAAAABAIBgAAAB/z/2EAAAH4SURBVHicnFNL',
    'SFRRGP7+e8+dmTRKJSojwsjIhFqEEyUIBbWodr0ksFrUYqaVEASzbBdIWIuoRUGlq2iKCNrook20SCOjwqSBJlMRwfGBo87j/v7nDHfkjo6I3+r8',
    'r+9/HgUwVUS7bhEjwsABInKwBpg5S4Q/Lujp/OO2TtoUfdlugTqxETDFlARHSvWObaGhdqt5D45NI5t3y8RzRDG4jkBF5fXmenRcDqMiYBt5bjGH',
    '26++oPtzYjWKnUqCg57YGt6LR23H8H5gGPG+v0Z3oakOT64ex0Imh9f9SV+4jqXKaBdrwbYIiXsX0ftrFDeff/I5vrjRgpb9O1Afi8Nl9tks73F4',
    'dzW2bQ4aglL0iG77lhAad1WtsKkiExXmUJLAIO8WlI5NK2zFCn6MpJDJuTjVWOtzqAwqRE82YFFsP0enylegHWLxftxvDSPkKLz9mkRAlqyDj+yp',
    'wUgqLZtRkiTjIygO0cO15n3ouBQ2mTX0Gh0hCshtfP+fwtkHPZhKZ8oTFHq1cFAOSfc+ND5jyD60nzaDLiWxsAr05WlH3bN+a2cdNDA8aUjunDm0',
    'PERJn8Q6oEnOPezFu2//8HFwzFP/tp2m81WywRPrIVnI5vFGrjExMWtk+SHP7OzRK30KedkwVzOohsq05UEqzhHzkNxxd5pCd5cAAAD//yVfHbQA',
    'AAAGSURBVAMAhUW/inSEugUAAAAASUVORK5CYIKJUE5HDQoaCgAAAA1JSERSAAAAIAAAACAIBgAAAHN6evQAAAOCSURBVHicxJdZTBNBGMf/uy1g',
    'QQVEDKBUPILGE+8SRV5UPGPUB2O88YIHE/HJRJ9MEF88YkzAqMGgSIxGNAFEw4skGIjKFSWCRo4KcgiUq1y248xAlxZKd8tRf0/f7M7M99/vm29m',
    'Rw1rTiT7eGpUcYCgEwgJgyDMwkRASCMRhGJq5Bu7Tbfw6KTB8kqwGJ6xT3bQDg/ogyBMIgSoo25PGxOPvJEEeMWkRNGvzYYLIRB2MhECYlN9PYn5',
    'qyAgEC6ERcLY57Fc1MB03NXOGSzVGveeY2oR0DkzcHGANzbM96dfQFDwswnl9e0YK8y3mrAVL9PRz8sDV/etwt4wLXw83W3eGYx9eFVUgyvphdx2',
    'Bu7bK/YxcdTpsG4+rh1Yw0U4oqmzF5eef8Kzj5VwBrWjl+ciF+HGwXU2zyr/dCK3op7bkaEBCJk5ldv+Uz3w8ORGTNe44X5uBcYtYB6dOH7/aqnd',
    '3NWLU8l5yCmrs+m3e2UwEo+Gw3cwNQk0WtlfaqFv6YISRHsPaVUgOToCU9xUvM1yGx6fOcI5I6NED118BloH88/GJEdvglLsClit9cPaED+pfS7l',
    'A+oMxlEnqW01Ii6tQGrraJWsmOOLMQsIpaVmPXlm6S/I8eJzNRo7eqT24kBvKMGugEUB0yW7sKYZSimqbraaQ5kAu4uw32SWbFGQ2yWGMFsVtMlM',
    'FI2xK6BU3yrZSnPJCNPOkOxifYuiMXZTUGI1OHiGFy81OXatmINAb82QgJpxCKihNcxq2cLdwzoEWE0+nPAF/nh6NlJqs0XrqGpkBTDOp+ajs/cv',
    't2fSXS7/8m5ELZs9ot+WJUHIurAVKnFgrbDMJ2SUQCkOz4LTEaG4fWi9zbOKhnbkfW+Au1rFT8WFs6aNGMciGHXznaLdUPYwOrM5lG+vll1RKUpF',
    'iJCBHSwR17P4l49G2e827LmTw51a0NLF+/biNr6IHSEbAWvYpAtoyJcG+fIfkrI6A340dkhfGTzoVGvlVC4STglQgrMiZFPgLPpBZ0rTIdJINmCC',
    'YSK22xExomKob5HmshiTgCXsVfQPivGtvg3vyxuG+SfFanZloltIFCYBFglWQfvXzMVLelybie1y476nxKSFqIT+IroefeBSiMFE3FaJPUmHqsxE',
    'jIaLIWZygvnmVdCddCSd3dUGLo6T7Jj64PfCe8dfs7bt38Z/uJ7/AwAA//9M4AfgAAAABklEQVQDAK12cQaGWFPWAAAAAElFTkSuQmCC',
  ].join(''),
  'base64',
)

export function buildFaviconRoutes(): Routes {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false, caseSensitive: true })
  router.on(['GET', 'HEAD'], '/favicon.ico', (req, res) => {
    ;(res as ServerResponse).writeHead(200, {
      'Content-Type': 'image/x-icon',
      'Content-Length': ICO.length,
      'Cache-Control': 'public, max-age=86400',
      'X-Content-Type-Options': 'nosniff',
    })
    res.end(req.method === 'HEAD' ? undefined : ICO)
  })
  return { router, allow: ['GET', 'HEAD'] }
}
