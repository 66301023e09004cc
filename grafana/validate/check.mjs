// Type-checks every dashboard in ../dashboards against dashboard-types.ts with tsc.
// Each JSON file becomes an object literal checked with `satisfies`, so TypeScript reports unknown keys
// (excess property checks), missing required fields and wrong value types, with the JSON path in the error.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dashboardsDir = process.argv[2] ?? join(here, '..', 'dashboards');
const buildDir = join(here, 'build');
rmSync(buildDir, { recursive: true, force: true });
mkdirSync(buildDir);

const files = readdirSync(dashboardsDir).filter((name) => name.endsWith('.json'));
if (files.length === 0) {
  console.error(`no dashboards in ${dashboardsDir}`);
  process.exit(1);
}
for (const name of files) {
  const json = readFileSync(join(dashboardsDir, name), 'utf8');
  JSON.parse(json); // fail early, with the file name, on invalid JSON
  const source =
    "import type { CheckedDashboard } from '../dashboard-types';\n" +
    `export const dashboard = ${json.trim()} satisfies CheckedDashboard;\n`;
  writeFileSync(join(buildDir, name.replace(/\.json$/, '.ts')), source);
}
const tsc = join(here, 'node_modules', 'typescript', 'bin', 'tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
} catch {
  process.exit(1);
}
console.log(`${files.length} dashboards match @grafana/schema`);
