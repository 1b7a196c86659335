// Type-only stand-in for `@langchain/langgraph/zod` (mapped in tsconfig.json `paths`). The real
// declarations also augment `zod/v4`'s ZodType, and that augmentation hides @hono/zod-openapi's
// `.openapi()` from every schema in the project. langchain's types need only these names.
export {
  InteropZodToStateDefinition,
  META_EXTRAS_DESCRIPTION_PREFIX,
  ReducedZodChannel,
  SchemaMeta,
  SchemaMetaRegistry,
  UpdateType,
  schemaMetaRegistry,
  withLangGraph,
} from '../../node_modules/@langchain/langgraph/dist/graph/zod/meta.js';
