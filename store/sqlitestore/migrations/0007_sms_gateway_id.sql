-- Delivery reports the upstream gateway pushes name the message by the
-- gateway's id: this index finds it. Messages not handed over yet have an
-- empty gateway_message_id and stay out of it.

CREATE INDEX sms_messages_gateway_id ON sms_messages (gateway_message_id, number)
    WHERE gateway_message_id <> '';
