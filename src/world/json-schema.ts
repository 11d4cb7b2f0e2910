import { toJsonSchema, type JsonSchema } from '@valibot/to-json-schema';
import { Place, WorldFileSchema } from './schema.ts';

/** Where the committed JSON Schema of the world file is (editors read it; `npm run world:schema` writes it). */
export const WORLD_JSON_SCHEMA_PATH = 'docs/world.schema.json';

/** What the repository check (a raw check: its message depends on the value) requires, as the loader says it. */
const REPOSITORY_RULE = 'an absolute path of a git repository on this machine, or a git URL (file:///…, ssh://, https://, or user@host:path); at most 4096 characters';

/**
 * The world file's JSON Schema (draft 2020-12), generated from the loader's own valibot schema
 * (src/world/schema.ts), as the file is written (defaults are filled in, paths resolved, after it).
 * What JSON Schema cannot say (a check by a function: an absolute path, a branch name, storable
 * text, a project's repo needing its base) is said in the field's `description`, in the loader's own
 * words; any other action the converter cannot express throws, so a new one is not silently left out.
 */
export function worldJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(WorldFileSchema, {
    target: 'draft-2020-12',
    typeMode: 'input',
    errorMode: 'throw',
    definitions: { Place },
    overrideAction: ({ valibotAction, jsonSchema }) => {
      const rule = valibotAction.type === 'raw_check' ? REPOSITORY_RULE
        : valibotAction.type === 'check' ? String((valibotAction as { message?: unknown }).message)
        : null;
      // A check across an object's fields (a project's repo and base) is said by the object's own description.
      if (rule === null || jsonSchema.type === 'object') return rule === null ? undefined : jsonSchema;
      return { ...jsonSchema, description: jsonSchema.description === undefined ? rule : `${jsonSchema.description}; ${rule}` } as JsonSchema;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return {
    $schema,
    title: 'Agent console world file',
    description: 'Users, projects, agents, channels, installations, artifacts and threads the service loads at start (docs/world-file.md).',
    ...rest,
  };
}
