// Build step (npm run build): bundle the page (sidecar/src/ui/app) and its libraries with esbuild into
// dist/…/ui/assets, which `ccotel ui` serves and `--export` inlines. Nothing is fetched at run time.
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SOURCE_DIR = join(import.meta.dirname, '..', '..', '..', '..', 'sidecar', 'src', 'ui', 'app');
const ASSETS_DIR = join(import.meta.dirname, 'assets');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ccotel</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<div id="app"></div>
<script src="/assets/app.js"></script>
</body>
</html>
`;

mkdirSync(ASSETS_DIR, { recursive: true });
await build({
  entryPoints: { app: join(SOURCE_DIR, 'main.ts') },
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2022',
  outdir: ASSETS_DIR,
  legalComments: 'none',
  logLevel: 'warning',
});
writeFileSync(join(ASSETS_DIR, 'index.html'), PAGE);
