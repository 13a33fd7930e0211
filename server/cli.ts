#!/usr/bin/env node
/**
 * The `backchannel` command at the path users' host configurations name
 * (`dist/server/cli.js`); the command itself is cli/main.ts. The one import from a
 * layer above `server/`, allowed by name in the layer rules (docs/ARCHITECTURE.md).
 */
import "../cli/main.js";
