#!/usr/bin/env node
// Rewrites the shapes section of docs/cli.md from the built schemas (run `npm run build` first).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withShapesDoc } from '../dist/core/shapes/doc.js';

const file = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
writeFileSync(file, withShapesDoc(readFileSync(file, 'utf8')));
