export { createEditorHub, MAX_OPENED, noEditorMessage } from './hub';
export type { EditorHub, EditorHubOptions, TimelineOpened } from './hub';
export { editorMiddleware, EDITOR_EVENTS_PATH, EDITOR_PREFIX } from './routes';
export type { EditorRoutesDeps } from './routes';
