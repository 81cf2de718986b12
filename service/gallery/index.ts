export { createGalleryStore, LINEAGE_SQL, purgeStudioItems } from './store';
export type { GalleryStore, NewItem, Viewer } from './store';
export { galleryRoutes, itemJson } from './routes';
