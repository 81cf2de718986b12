export { createGalleryStore, LINEAGE_SQL, purgeStudioItems } from './store';
export type { GalleryStore, NewItem, Viewer } from './store';
export { galleryRoutes } from './routes';
export { itemJson } from './page';
export { galleryReadOps, galleryReads } from './reads';
export type { GalleryReadOps, GalleryReads } from './reads';
export { galleryReferenceSources } from './store';
