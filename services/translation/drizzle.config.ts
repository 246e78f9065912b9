// drizzle-kit generates the SQL migrations from src/db/schema.ts: `npx drizzle-kit generate` in this folder.
export default {
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './src/db/migrations',
};
