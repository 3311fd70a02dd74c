package messaging
