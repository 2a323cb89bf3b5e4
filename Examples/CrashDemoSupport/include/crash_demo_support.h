#pragma once
void demo_placeholder(void);
