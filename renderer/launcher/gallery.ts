/** The Gallery panel lives in gallery/ (state, actions, views); main.ts places it. */
export { galleryPanel, type GalleryPanel } from './gallery/panel';
export type { Item } from './gallery/types';
