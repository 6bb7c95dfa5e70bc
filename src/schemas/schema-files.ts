import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SCHEMAS_DIR } from '../paths';

/** A JSON Schema node as read from a file. */
export type JsonSchema = { [keyword: string]: unknown };

/** A file under schemas/, keyed by its `$id`: the path relative to schemas/ (`rest/customers.json`). */
export interface SchemaFile {
  id: string;
  schema: JsonSchema;
}

function listJsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? listJsonFiles(path.join(dir, entry.name)) : entry.name.endsWith('.json') ? [path.join(dir, entry.name)] : [],
    )
    .sort();
}

/** Every schema file, in path order; a file whose `$id` is not its path is an error (refs resolve by `$id`). */
export function loadSchemaFiles(dir: string = SCHEMAS_DIR): SchemaFile[] {
  return listJsonFiles(dir).map((file) => {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as JsonSchema;
    const id = path.relative(dir, file).split(path.sep).join('/');
    if (schema.$id !== id) throw new Error(`${file}: $id must be "${id}"`);
    return { id, schema };
  });
}

/** The node a `$ref` (`#/$defs/x`, `../common/definitions.json#/$defs/name`) written in file `baseId` points at. */
export function resolveRef(files: ReadonlyMap<string, JsonSchema>, baseId: string, ref: string): { fileId: string; pointer: string; node: JsonSchema } {
  const [filePart, pointer = ''] = ref.split('#');
  const fileId = filePart ? path.posix.normalize(path.posix.join(path.posix.dirname(baseId), filePart)) : baseId;
  let node: unknown = files.get(fileId);
  for (const segment of pointer.split('/').slice(1)) {
    node = (node as JsonSchema | undefined)?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (node === undefined || node === null || typeof node !== 'object') throw new Error(`${baseId}: unresolvable $ref ${ref}`);
  return { fileId, pointer, node: node as JsonSchema };
}
