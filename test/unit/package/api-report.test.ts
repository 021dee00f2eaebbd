// The checked-in API reports (api/*.api.md) are the package's public surface as it is now, so
// that a change to the surface shows in review.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiReports } from '../../../scripts/api-report.js';

describe('the API reports', () => {
  it('match the public surface: after changing it, run npm run api:report and commit api/', () => {
    for (const [name, report] of apiReports()) {
      expect(readFileSync(join(import.meta.dirname, '../../../api', name), 'utf8'), `api/${name} is out of date: npm run api:report`).toBe(report);
    }
  }, 60_000);
});
