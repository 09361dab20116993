/* main.c — the tidesim command line (placeholder until the CLI lands). */
#include <stdio.h>

int main(void)
{
    fputs("tidesim: not built yet\n", stderr);
    return 2;
}
