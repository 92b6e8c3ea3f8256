export { openApiDocument, type OpenApiOptions, type OpenApiDocument } from './document';
export { COMPUTED_FIELDS, type JsonSchema } from './schemas';
