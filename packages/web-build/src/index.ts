// The serving side of a browser build (no esbuild needed at run time): read the manifest and the built files, answer
// asset requests, write the page that loads them. The build itself is `@scriptorium/web-build/build`.
export {
  type AssetResponse,
  type AssetStore,
  chooseEncoding,
  type Encoding,
  entryTags,
  IMMUTABLE_CACHE_CONTROL,
  loadAssets,
} from './assets.ts';
export {
  ASSET_NAME,
  ASSETS_FOLDER,
  contentTypeOf,
  MANIFEST_FILE,
  type Manifest,
  type ManifestEntry,
  type ManifestFile,
  PUBLIC_PATH,
  parseManifest,
  publicPathOf,
} from './manifest.ts';
export {
  appPage,
  contentSecurityPolicy,
  newNonce,
  type PageOptions,
  type PagePolicy,
  type PageResponse,
  pageHeaders,
} from './page.ts';
