#pragma once
int cly_placeholder(void);
