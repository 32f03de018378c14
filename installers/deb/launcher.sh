#!/bin/sh
# /usr/bin/keypose-studio: the installed studio (frozen app in /opt/keypose-studio/app).
exec /opt/keypose-studio/app/keypose-studio "$@"
