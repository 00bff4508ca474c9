// lobby-client: the game client SDK of the lobby server. Voice is its own entry (`lobby-client/voice`).
export { Client, type ClientOptions } from './client'
export { ApiError, ConnectionError, type ErrorTree, type FieldError, type MfaMethod, type MfaRequired } from './errors'
export { Rest, type MfaHandler, type RequestOptions, type RestOptions } from './rest'
export { localStorageTokenStore, memoryTokenStore, type StoredToken, type TokenKind, type TokenStore } from './tokens'
export {
  Gateway,
  type CloseInfo,
  type GatewayEvents,
  type GatewayOptions,
  type ReconnectInfo,
} from './gateway'
export {
  Lobbies,
  Lobby,
  makeNonce,
  type CreateOrJoin,
  type HistoryOptions,
  type LobbyEvents,
  type SendOptions,
} from './lobbies'
export {
  Relationships,
  RelationshipType,
  type Activity,
  type GameInvite,
  type GameRelationship,
  type Presence,
  type PresenceStatus,
  type Relationship,
  type RelationshipChange,
  type RelationshipEvents,
  type UnifiedFriend,
} from './relationships'
export type {
  Dispatches,
  GatewayLobby,
  LobbyMember,
  LobbyMemberEvent,
  LobbyVoiceState,
  Metadata,
  Ready,
  VoiceOffer,
} from './events'
export { LobbyVoice, type JoinOptions, type VoiceEvents, type VoiceState } from './voice-handle'
export { Auth } from './auth'
export {
  OAuth2,
  type AuthorizeOptions,
  type AuthorizeRequest,
  type OAuth2Tokens,
  type TokenExpiringCallback,
} from './oauth2'
export {
  RemoteAuth,
  DesktopLogin,
  RemoteAuthRequest,
  type DesktopLoginEvents,
  type DesktopLoginOptions,
  type RemoteUser,
} from './remote-auth'
export { MfaStep, type MfaMethodType } from './mfa'
export type {
  AuthSession,
  ElevationHandler,
  LocationMetadata,
  LoginOptions,
  LoginStep,
  MfaAnswer,
  RegisterOptions,
  Session,
} from './auth'
export { browserAuthenticator, type Authenticator } from './webauthn'
export type { Method, RouteBody, RouteOf, RouteQuery, RouteResponse } from './routes'
/** Every route's types, as generated from the server's declarations (api.Lobby, api.User, api.Api, …). */
export type * as api from './api.gen'
export type { Api, LobbyMessage, User } from './api.gen'
