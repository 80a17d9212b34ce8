/** `npx vite-node deploy/kubernetes/generate.ts`: writes deploy/kubernetes/generated/*.yaml (see render.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBERNETES_DIR, renderGenerated } from './render.js';

for (const [name, text] of Object.entries(renderGenerated())) {
  writeFileSync(join(KUBERNETES_DIR, 'generated', name), text);
  console.log(`wrote deploy/kubernetes/generated/${name}`);
}
