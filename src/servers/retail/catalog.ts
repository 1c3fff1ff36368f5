/** The product types of the retail world: option dimensions and a base price each. */
export interface ProductTemplate {
  name: string;
  options: { [dimension: string]: readonly string[] };
  basePrice: number;
}

/** Every product type the store sells. */
export const PRODUCT_TEMPLATES: readonly ProductTemplate[] = [
  {
    name: 'T-Shirt',
    options: { color: ['black', 'white', 'navy', 'red', 'green'], size: ['S', 'M', 'L', 'XL'] },
    basePrice: 24,
  },
  {
    name: 'Jeans',
    options: {
      color: ['blue', 'black', 'grey'],
      size: ['30', '32', '34', '36'],
      fit: ['slim', 'regular'],
    },
    basePrice: 59,
  },
  {
    name: 'Running Shoes',
    options: { color: ['black', 'white', 'blue'], size: ['8', '9', '10', '11'] },
    basePrice: 119,
  },
  {
    name: 'Water Bottle',
    options: { capacity: ['500ml', '750ml', '1000ml'], color: ['blue', 'black', 'green'] },
    basePrice: 22,
  },
  {
    name: 'Backpack',
    options: { color: ['black', 'grey', 'olive'], capacity: ['20L', '30L'] },
    basePrice: 79,
  },
  {
    name: 'Wireless Headphones',
    options: { color: ['black', 'white', 'silver'], type: ['over-ear', 'in-ear'] },
    basePrice: 149,
  },
  {
    name: 'Desk Lamp',
    options: { color: ['black', 'white', 'brass'], power: ['USB', 'AC adapter'] },
    basePrice: 39,
  },
  {
    name: 'Coffee Maker',
    options: { capacity: ['4 cups', '8 cups', '12 cups'], type: ['drip', 'pour-over'] },
    basePrice: 89,
  },
  {
    name: 'Yoga Mat',
    options: { thickness: ['4mm', '6mm'], color: ['purple', 'blue', 'black'] },
    basePrice: 34,
  },
  {
    name: 'Smart Watch',
    options: { color: ['black', 'silver', 'rose gold'], band: ['silicone', 'leather', 'metal'] },
    basePrice: 229,
  },
];
