// build.mjs — builds the console from src/ into dist/ (committed; the genroc
// binary embeds dist/ at build time: scripts/embed-ui.cmake).
//
//   node web/build.mjs            writes web/dist/
//   node web/build.mjs OUTDIR     writes OUTDIR (the console suite builds into a
//                                 scratch folder and compares it with dist/)
//
// esbuild bundles src/main.js (and the graph layout library, dagre) into one
// minified script and src/style.css into one style sheet; index.html is
// copied, and the bundled libraries' licences go to licenses.txt.  The output depends only on the sources and the locked versions
// (package-lock.json): the same inputs give the same bytes.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, 'dist'));
mkdirSync(out, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  legalComments: 'eof',
  logLevel: 'warning',
};
await esbuild.build({
  ...common,
  entryPoints: [join(here, 'src/main.js')],
  outfile: join(out, 'app.js'),
  format: 'iife',
  banner: { js: '/*! genroc console. Bundles @dagrejs/dagre and @dagrejs/graphlib (MIT): /ui/licenses.txt */' },
});
await esbuild.build({
  ...common,
  entryPoints: [join(here, 'src/style.css')],
  outfile: join(out, 'app.css'),
});
copyFileSync(join(here, 'src/index.html'), join(out, 'index.html'));
// The licences of what the bundle holds, served beside it.
const licences = ['@dagrejs/dagre', '@dagrejs/graphlib'].map((p) => {
  const meta = JSON.parse(readFileSync(join(here, 'node_modules', p, 'package.json'), 'utf8'));
  return `${p} ${meta.version}\n\n${readFileSync(join(here, 'node_modules', p, 'LICENSE'), 'utf8').trim()}\n`;
});
writeFileSync(join(out, 'licenses.txt'), licences.join('\n----\n\n'));
