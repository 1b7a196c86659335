declare module 'swagger-ui-dist' {
  /** Folder holding the Swagger UI assets. */
  export function getAbsoluteFSPath(): string;
  const swaggerUi: { getAbsoluteFSPath(): string };
  export default swaggerUi;
}
