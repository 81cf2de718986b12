export { createStudioProxy, type StudioProxy, type StudioProxyOptions, type StudioTarget } from './proxy';
