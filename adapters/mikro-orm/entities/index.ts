import { AccessTokenSchema, InviteSchema, SessionSchema, SignInFlowSchema } from './accounts.ts';
import { AgentSchema, ArtifactSchema, ChannelSchema, InstallationSchema, ProjectSchema, UserSchema } from './catalog.ts';
import { ConversationSchema, DeliverySchema, ModelMessageSchema, PendingAnswerSchema, PendingSchema, RunSchema } from './conversations.ts';
import { DirectiveSchema, EventSchema } from './events.ts';
import { ChannelLinkCodeSchema, ChannelLinkSchema } from './links.ts';
import { HookKeySchema, HookSchema, ScheduleFireSchema, ScheduleSchema, WebhookDeliverySchema, WebhookSchema } from './automation.ts';
import { ChatClaimSchema, ChatCursorSchema, ChatOccupantSchema, ChatServedPlaceSchema } from './chat.ts';
import { QueuedDirectiveSchema, UnsentPromptSchema } from './queue.ts';
import { MessageSchema, ThreadMemberSchema, ThreadRewindSchema, ThreadSchema } from './threads.ts';

export * from './accounts.ts';
export * from './catalog.ts';
export * from './chat.ts';
export * from './conversations.ts';
export * from './events.ts';
export * from './automation.ts';
export * from './links.ts';
export * from './queue.ts';
export * from './threads.ts';

/** Every mapped table, listed explicitly (MikroORM is never asked to discover entities by glob). */
export const ENTITIES = [
  UserSchema,
  ProjectSchema,
  AgentSchema,
  ChannelSchema,
  InstallationSchema,
  ArtifactSchema,
  ThreadSchema,
  ThreadMemberSchema,
  MessageSchema,
  ThreadRewindSchema,
  ConversationSchema,
  RunSchema,
  ModelMessageSchema,
  PendingSchema,
  PendingAnswerSchema,
  DirectiveSchema,
  EventSchema,
  DeliverySchema,
  QueuedDirectiveSchema,
  ChannelLinkCodeSchema,
  ChannelLinkSchema,
  UnsentPromptSchema,
  ChatCursorSchema,
  ChatOccupantSchema,
  ChatClaimSchema,
  SessionSchema,
  AccessTokenSchema,
  SignInFlowSchema,
  InviteSchema,
  HookSchema,
  HookKeySchema,
  ScheduleSchema,
  ScheduleFireSchema,
  ChatServedPlaceSchema,
  WebhookSchema,
  WebhookDeliverySchema,
] as const;
