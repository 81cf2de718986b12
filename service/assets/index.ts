export { createAssets } from './domain';
export type { AssetsDomain, AssetsOptions } from './domain';
export { ASSETS_SQL } from './store';
export type { AssetReferenceSource, AssetsStore, AssetView } from './store';
export { assetRoutes } from './routes';
export { ASSET_KINDS } from './schema';
export type { AssetKind } from './schema';
export { sanitizeFilename } from './filename';
export { removeQuietly } from './blobs';
